"""The last-layer-on-scored-rows path equals the model's own full forward."""

from __future__ import annotations

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.tail import supports_tail_rows, tail_rows
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_gemma3, make_tiny_llama


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("tail") / "llama", add_bos=False, num_attention_heads=4)


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory):
    return make_tiny_gemma3(tmp_path_factory.mktemp("tail") / "gemma3")


def _count_whole_layer_runs(backend) -> list[int]:
    """A counter of the last layer's own forward calls (the tail path calls its parts, never it)."""
    runs: list[int] = []
    backend.model.get_decoder().layers[-1].register_forward_hook(lambda *_: runs.append(1))
    return runs


def _tail_and_full(backend, keep: int, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoder's last ``keep`` rows, computed in full and with the tail path (which must not fall
    back to running the whole layer)."""
    ids = torch.randint(2, vocab, (3, 96))  # [B, N], longer than the tiny Gemma's sliding window
    decoder = backend.model.get_decoder()
    runs = _count_whole_layer_runs(backend)
    with torch.inference_mode():
        backend.reset_dynamic_rope()
        full = decoder(input_ids=ids, use_cache=False).last_hidden_state[:, -keep:]  # [B, K, H]
        backend.reset_dynamic_rope()
        with tail_rows(backend.model, keep):
            tail = decoder(input_ids=ids, use_cache=False).last_hidden_state  # [B, K, H]
    assert len(runs) == 1, "the tail path fell back to the whole layer"
    return tail, full


@pytest.mark.parametrize("rope", ["none", "linear:2", "dynamic:2", "yarn:2"])
@pytest.mark.parametrize("keep", [1, 7, 64])
def test_tail_rows_equal_full_decoder(llama_dir, rope, keep):
    backend = load_hf_backend(make_method(str(llama_dir), rope, None, "float32", "hf"))
    assert "tail_rows" in backend.fast_paths
    tail, full = _tail_and_full(backend, keep, 300)
    assert tail.shape == full.shape
    torch.testing.assert_close(tail, full, rtol=1e-5, atol=1e-5)
    assert type(backend.model.get_decoder().layers[-1]).__name__ == "LlamaDecoderLayer"  # restored


@pytest.mark.parametrize("rope", ["none", "linear:2"])
@pytest.mark.parametrize("keep", [1, 7, 64])
def test_gemma3_global_last_layer_tail_equals_full_decoder(gemma3_dir, rope, keep):
    backend = load_hf_backend(make_method(str(gemma3_dir), rope, None, "float32", "hf"))
    assert "tail_rows" in backend.fast_paths
    tail, full = _tail_and_full(backend, keep, backend.model.config.vocab_size)
    assert tail.shape == full.shape
    torch.testing.assert_close(tail, full, rtol=1e-5, atol=1e-5)
    assert type(backend.model.get_decoder().layers[-1]).__name__ == "Gemma3DecoderLayer"


def test_gemma3_with_a_sliding_last_layer_runs_unchanged(tmp_path):
    sliding_last = ["sliding_attention", "full_attention", "sliding_attention"]
    directory = make_tiny_gemma3(tmp_path / "gemma3", layer_types=sliding_last)
    backend = load_hf_backend(make_method(str(directory), "none", None, "float32", "hf"))
    assert not supports_tail_rows(backend.model) and "tail_rows" not in backend.fast_paths


@pytest.mark.parametrize("model_dir", ["llama_dir", "gemma3_dir"])
def test_score_uses_fewer_rows_but_same_nll(request, model_dir):
    directory = request.getfixturevalue(model_dir)
    backend = load_hf_backend(make_method(str(directory), "none", None, "float32", "hf"))
    ids = torch.randint(2, backend.model.config.vocab_size, (2, 80))  # [B, N]
    targets = ids[:, 50:79]  # [B, n]: predicted at positions 49..77
    runs = _count_whole_layer_runs(backend)
    fast = backend.score(ids, 49, targets)
    assert not runs  # scored through the tail path
    backend.fast_paths -= {"tail_rows"}
    slow = backend.score(ids, 49, targets)
    torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-5)


def test_coca_models_do_not_take_the_tail_path():
    from tests.models.test_coca_parity import tiny_coca

    assert not supports_tail_rows(tiny_coca("llama"))
    assert not supports_tail_rows(tiny_coca("neox"))
