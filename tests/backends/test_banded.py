"""Banded sliding-window attention gives plain SDPA's numbers, and only sliding layers take it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from coca_eval.backends import banded
from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_gemma3, make_tiny_llama


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory):
    return make_tiny_gemma3(tmp_path_factory.mktemp("banded") / "gemma3")  # sliding window 16


def _dense_sliding_sdpa(q, k, v, window: int, scale: float) -> torch.Tensor:
    """Reference: one SDPA call with the whole [N, N] sliding mask (transformers' rule)."""
    n = q.shape[2]
    i, j = torch.arange(n).unsqueeze(1), torch.arange(n).unsqueeze(0)  # [N, 1], [1, N]
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)  # [B, h, N, d]
    out = F.scaled_dot_product_attention(q, k, v, (j <= i) & (j > i - window), scale=scale)
    return out.transpose(1, 2)  # [B, N, h, d]


@pytest.mark.parametrize("window, block", [(5, 7), (16, 16), (16, 64), (40, 8)])
def test_banded_attention_equals_dense_mask(monkeypatch, window, block):
    monkeypatch.setattr(banded, "BLOCK_ROWS", block)
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 50, 8), torch.randn(2, 2, 50, 8), torch.randn(2, 2, 50, 8)  # GQA 2
    module = SimpleNamespace(num_key_value_groups=2, is_causal=True)
    out, _ = banded.banded_attention(module, q, k, v, None, scaling=0.3, sliding_window=window)
    torch.testing.assert_close(out, _dense_sliding_sdpa(q, k, v, window, 0.3), rtol=1e-5, atol=1e-6)


def _count_banded_blocks(monkeypatch) -> list[int]:
    calls: list[int] = []

    def counting_sdpa(*args, **kwargs):
        calls.append(1)
        return F.scaled_dot_product_attention(*args, **kwargs)

    monkeypatch.setattr(banded, "F", SimpleNamespace(scaled_dot_product_attention=counting_sdpa))
    return calls


@pytest.mark.parametrize("block", [8, 16, 40])
def test_gemma3_scores_equal_with_banded_sliding_layers(gemma3_dir, monkeypatch, block):
    monkeypatch.setattr(banded, "BLOCK_ROWS", block)
    backend = load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    assert "banded" in backend.fast_paths
    ids = torch.randint(2, backend.model.config.vocab_size, (2, 96))  # [B, N], 6 windows long
    blocks = _count_banded_blocks(monkeypatch)
    fast = backend.score(ids, 30, ids[:, 31:])  # [B, n]
    assert len(blocks) == 2 * -(-96 // block)  # two sliding layers, every block of rows
    backend.fast_paths -= {"banded"}
    slow = backend.score(ids, 30, ids[:, 31:])
    torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-5)


def test_models_without_sliding_layers_do_not_band(tmp_path):
    directory = make_tiny_llama(tmp_path / "llama", add_bos=False)
    assert (
        "banded" not in load_hf_backend(make_method(str(directory), "none", None, "float32", "hf")).fast_paths
    )


def test_probe_rejects_a_wrong_banded_result(gemma3_dir, monkeypatch):
    def wrong(module, query, key, value, attention_mask, **kwargs):
        return torch.zeros_like(query).transpose(1, 2), None

    monkeypatch.setattr(banded, "banded_attention", wrong)
    assert (
        "banded"
        not in load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf")).fast_paths
    )


def test_registry_is_restored(gemma3_dir):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    with banded.banded_sdpa():
        assert ALL_ATTENTION_FUNCTIONS["sdpa"] is banded.banded_attention
    assert ALL_ATTENTION_FUNCTIONS["sdpa"].__name__ == "sdpa_attention_forward"
