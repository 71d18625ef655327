"""Where BOS goes in a passkey prompt (``--bos``), and that the default keeps the journals' keys."""

from types import SimpleNamespace

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.prompts import PasskeySample
from coca_eval.passkey.task import prompt_builder

BOS = 7


def _backend(adds_bos: bool, bos_token_id: int | None = BOS):
    """A backend as prompt_builder sees it: one token per character, BOS id and default."""
    return SimpleNamespace(
        adds_bos=adds_bos, bos_token_id=bos_token_id, encode=lambda s: [100 + ord(c) for c in s]
    )


@pytest.mark.parametrize(
    ("policy", "adds_bos", "first_is_bos"),
    [
        ("auto", True, True),
        ("auto", False, False),
        ("always", False, True),
        ("always", True, True),
        ("never", True, False),
        ("never", False, False),
    ],
)
def test_the_policy_decides_what_the_prompt_starts_with(policy, adds_bos, first_is_bos):
    builder = prompt_builder(make_passkey_params({"bos": policy}), _backend(adds_bos))
    prompt = builder.build(PasskeySample(0, 12345, 0.5), 400)
    assert len(prompt.ids) == 400
    assert (prompt.ids[0] == BOS) == first_is_bos
    assert BOS not in prompt.ids[1:]


def test_always_needs_a_bos_token():
    with pytest.raises(CocaEvalError, match="needs a BOS token"):
        prompt_builder(make_passkey_params({"bos": "always"}), _backend(False, bos_token_id=None))


def test_an_unknown_policy_is_one_line():
    with pytest.raises(CocaEvalError, match="--bos must be one of auto, always, never"):
        make_passkey_params({"bos": "sometimes"})


def test_auto_keeps_the_identity_it_had_before_the_option():
    """Journals written before ``bos`` existed resume under ``auto``; another policy is another cell."""
    auto, always = make_passkey_params({}), make_passkey_params({"bos": "always"})
    assert "bos" not in auto.identity()
    assert always.identity() == {**auto.identity(), "bos": "always"}


def test_rescale_keeps_the_identity_it_had_before_the_option():
    """Journals written before ``dynamic_rope`` existed resume under ``rescale``; hold is another cell."""
    rescale, hold = make_passkey_params({}), make_passkey_params({"dynamic_rope": "hold"})
    assert "dynamic_rope" not in rescale.identity()
    assert hold.identity() == {**rescale.identity(), "dynamic_rope": "hold"}
    with pytest.raises(CocaEvalError, match="--dynamic-rope must be one of rescale, hold"):
        make_passkey_params({"dynamic_rope": "freeze"})
