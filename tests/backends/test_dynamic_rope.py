"""Dynamic rope tables: transformers' own rescaling rules, and holding a prompt's scaling while it is
prefilled in pieces."""

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method


@pytest.fixture(scope="module")
def backend(tiny_llama_dir):
    return load_hf_backend(make_method(str(tiny_llama_dir), "dynamic:2", None, "float32", "hf"))


def _table(backend) -> torch.Tensor:
    return backend.model.model.rotary_emb.inv_freq.clone()  # (head_dim / 2,)


def _forward(backend, n_tokens: int) -> None:
    with torch.inference_mode():
        backend.model(input_ids=torch.full((1, n_tokens), 5))


def _table_after_one_forward(backend, n_tokens: int) -> torch.Tensor:
    backend.reset_dynamic_rope()
    _forward(backend, n_tokens)
    return _table(backend)


def test_transformers_shrinks_back_after_a_short_forward(backend):
    """Why pieces need holding: a piece shorter than the trained length (256) undoes the scaling."""
    trained = _table_after_one_forward(backend, 10)
    scaled = _table_after_one_forward(backend, 400)
    assert not torch.equal(scaled, trained)
    _forward(backend, 100)
    assert torch.equal(_table(backend), trained)


@pytest.mark.parametrize("length", [200, 256, 400, 1000])
def test_held_table_is_the_whole_prompts_and_survives_short_pieces(backend, length):
    whole = _table_after_one_forward(backend, length)
    _forward(backend, 1500)  # leave a larger scaling behind: holding must not depend on history
    with backend.dynamic_rope_held_at(length):
        assert torch.equal(_table(backend), whole)
        for piece in (100, length // 2, length):
            _forward(backend, piece)
            assert torch.equal(_table(backend), whole)
    assert backend.model.model.rotary_emb.original_max_seq_len == 256


def test_generation_grows_the_table_after_the_hold(backend):
    """Decoding past the prompt rescales token by token, as a naive run does."""
    with backend.dynamic_rope_held_at(400):
        held = _table(backend)
    _forward(backend, 401)
    assert not torch.equal(_table(backend), held)
    assert torch.equal(_table(backend), _table_after_one_forward(backend, 401))


def test_a_hold_through_the_answer_keeps_the_prompts_table(backend):
    """What vLLM's engine does and ``--dynamic-rope hold`` asks for: no growth past the prompt."""
    with backend.dynamic_rope_held_at(400, through_answer=True):
        held = _table(backend)
        _forward(backend, 450)
        assert torch.equal(_table(backend), held)
    assert backend.model.model.rotary_emb.max_seq_len_cached == 400
