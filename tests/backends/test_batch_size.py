"""The hf backend's batch size: per-row bytes from the model's shapes, ``auto``'s pick, and the refusal of
an explicit batch that cannot fit (coca_eval.backends.batch_size)."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig

from coca_eval.backends import batch_size
from coca_eval.errors import CocaEvalError
from coca_eval.methods import MethodSpec


def _cache_bytes_per_position(model, positions: int) -> int:
    """Bytes of the KV cache a real forward pass leaves for ``positions`` tokens, per token."""
    with torch.no_grad():
        out = model(torch.zeros(1, positions, dtype=torch.long), use_cache=True)
    cache = out.past_key_values
    total = sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)
    return total // positions


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_kv_bytes_per_position_is_what_a_forward_pass_caches(tiny_llama_dir, dtype):
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=dtype).eval()
    measured = _cache_bytes_per_position(model, 5)
    assert measured == 2 * 2 * 2 * 16 * (4 if dtype == torch.float32 else 2)  # k,v x layers x kv heads x dim
    element = next(model.parameters()).element_size()
    assert batch_size.kv_bytes_per_position(model.config, element) == measured


def test_kv_bytes_per_position_reads_an_explicit_head_dim_and_full_attention():
    # head_dim set apart from hidden/heads (as Gemma's configs do), and no grouped KV heads
    config = LlamaConfig(hidden_size=64, num_attention_heads=4, num_hidden_layers=3, head_dim=32)
    config.num_key_value_heads = None
    assert batch_size.kv_bytes_per_position(config, 2) == 2 * 3 * 4 * 32 * 2


def _config() -> LlamaConfig:
    return LlamaConfig(
        vocab_size=1000, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2
    )


@pytest.mark.parametrize(
    ("length", "budget", "positions"),
    [(1000, 32, 1000 + 256), (1000, 500, 1500), (4096, 256, 4352)],  # headroom below 256, budget above it
)
def test_a_row_holds_its_cache_twice_and_its_fp32_logits_twice(length, budget, positions):
    per_position = 2 * 2 * 2 * 16 * 4  # k,v x layers x kv heads x head dim x fp32
    expected = 2 * per_position * positions + 2 * 4 * 1000
    assert batch_size.row_bytes(_config(), 4, length, budget) == expected


class _Model(torch.nn.Module):
    def __init__(self, device: str = "cpu"):
        super().__init__()
        self.config = _config()
        self.weight = torch.nn.Parameter(torch.zeros(1, device=device))


@pytest.mark.parametrize(
    ("free_rows", "expected"),
    [(0.4, 1), (2.0, 1), (3.0, 1), (6.0, 3), (6.99, 3), (32.0, 16), (10_000.0, 16)],
)
def test_auto_fits_half_the_free_memory_at_least_one_at_most_the_cpu_cap(monkeypatch, free_rows, expected):
    per_row = batch_size.row_bytes(_config(), 4, 2048, 64)
    monkeypatch.setattr(batch_size, "free_memory", lambda device: int(free_rows * per_row))
    assert batch_size.auto_batch_size(_Model(), 2048, 64) == expected


def _method(path) -> MethodSpec:
    return MethodSpec(model=str(path), label="tiny", dtype="float32", backend="hf")


def test_an_explicit_batch_over_the_device_memory_is_refused(monkeypatch, tiny_llama_dir):
    config = AutoConfig.from_pretrained(tiny_llama_dir)
    per_row = 2 * (2 * 2 * 2 * 16 * 4) * (300 + 256) + 2 * 4 * config.vocab_size
    monkeypatch.setattr(batch_size, "total_memory", lambda device: 4 * per_row)
    batch_size.check_batch_size([_method(tiny_llama_dir)], "cpu", 300, 64, 4)  # exactly fits
    batch_size.check_batch_size([_method(tiny_llama_dir)], "cpu", 300, 64, None)  # auto: never refused
    with pytest.raises(CocaEvalError, match=r"--batch-size 5: 5 rows of 300 \+ 64 tokens"):
        batch_size.check_batch_size([_method(tiny_llama_dir)], "cpu", 300, 64, 5)


def test_only_hf_methods_are_checked(monkeypatch, tiny_llama_dir):
    monkeypatch.setattr(batch_size, "total_memory", lambda device: 1)
    served = MethodSpec(model=str(tiny_llama_dir), label="served", backend="openai")
    batch_size.check_batch_size([served], "cpu", 300, 64, 8)
    with pytest.raises(CocaEvalError, match="--batch-size 8"):
        batch_size.check_batch_size([served, _method(tiny_llama_dir)], "cpu", 300, 64, 8)
