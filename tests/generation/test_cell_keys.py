"""The generation tasks' shared runner base keeps every cell key as it was before it existed, so the
journals of earlier passkey and RULER runs still resume (the keys below were computed before it)."""

import pytest

from coca_eval.methods import MethodSpec, make_method
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.task import PasskeyTask
from coca_eval.ruler.params import make_ruler_params
from coca_eval.ruler.task import RulerRunner

PLAIN = MethodSpec(model="char-model", label="chars")


def _zoo():
    return make_method("zoo-rope", "none", "zoo", "float32", "hf")  # a preset that puts BOS in front


@pytest.mark.parametrize(
    ("method", "key"),
    [(lambda: PLAIN, "bb6eef66d211fdf651556b5345c3521b"), (_zoo, "3cd075cf674eced43ba05d0f5e81092e")],
)
def test_passkey_keys_are_unchanged(method, key):
    assert PasskeyTask(make_passkey_params({}), None, None).cell_key(method(), "w", 1024) == key


@pytest.mark.parametrize(
    ("values", "method", "key"),
    [
        ({}, lambda: PLAIN, "d470a9411ae25bfb16b4c1626fd4bc17"),
        ({}, _zoo, "c4ccb9376d9b5c919aea6db02cd9cef1"),
        ({"bos": "never"}, _zoo, "ccf2a7f6cc970f4448823dfdc53c572b"),
    ],
)
def test_ruler_keys_of_the_prompt_only_meaning_are_unchanged(values, method, key):
    """``--length-counts prompt`` is what every run made before the option did: its cells keep their keys
    (their journals resume); RULER's meaning, the default, keys its cells apart."""
    runner = RulerRunner(make_ruler_params({**values, "length_counts": "prompt"}), None, None)
    assert runner.cell_key(method(), "w", 1024, "vt") == key
    default = RulerRunner(make_ruler_params(values), None, None)
    assert default.cell_key(method(), "w", 1024, "vt") != key
