"""The KV cache reaches our attention modules under either keyword transformers has used for it."""

from __future__ import annotations

import pytest
import torch
from test_alibi import tiny_alibi
from test_coca_parity import tiny_coca
from transformers import DynamicCache

from coca_eval.models.layer_cache import cache_keyword, layer_cache, returned_cache


def test_either_name_gives_the_one_cache_and_two_different_ones_are_refused():
    cache = DynamicCache()
    assert layer_cache(cache, None) is cache
    assert layer_cache(None, cache) is cache
    assert layer_cache(cache, cache) is cache
    assert layer_cache(None, None) is None
    with pytest.raises(ValueError, match="two different KV caches"):
        layer_cache(cache, DynamicCache())


@pytest.mark.parametrize("kind", ["alibi", "coca"])
@pytest.mark.parametrize("keyword", ["cache", "past_key_values"])
def test_the_attention_fills_and_reads_a_cache_given_under_either_keyword(kind, keyword):
    model = tiny_alibi() if kind == "alibi" else tiny_coca("llama")
    attention = model.model.layers[0].self_attn
    hidden = torch.randn(1, 10, model.config.hidden_size)  # (b, n, hidden)
    positions = torch.arange(10).view(1, 10)  # (b, n)
    rotary = model.model.rotary_emb(hidden, positions)  # (cos, sin) or None for ALiBi
    mask = torch.ones(10, 10, dtype=torch.bool).tril().view(1, 1, 10, 10)  # (b, 1, n, n)
    with torch.no_grad():
        full, _ = attention(hidden, position_embeddings=rotary, attention_mask=mask)  # (b, n, hidden)
        cache = DynamicCache()
        head_rotary = None if rotary is None else tuple(part[:, :6] for part in rotary)
        tail_rotary = None if rotary is None else tuple(part[:, 6:] for part in rotary)
        attention(
            hidden[:, :6],
            position_embeddings=head_rotary,
            attention_mask=mask[..., :6, :6],
            **{keyword: cache},
        )
        assert cache.get_seq_length(0) == 6
        tail, _ = attention(
            hidden[:, 6:],
            position_embeddings=tail_rotary,
            attention_mask=mask[..., 6:, :],
            **{keyword: cache},
        )  # (b, 4, hidden)
    assert cache.get_seq_length(0) == 10
    assert (tail - full[:, 6:]).abs().max() <= 1e-5


def test_a_model_returns_the_cache_it_was_given_under_its_own_keyword():
    model = tiny_coca("llama")
    tokens = torch.randint(0, model.config.vocab_size, (1, 12))  # (b, n)
    with torch.no_grad():
        first = model(tokens[:, :8], use_cache=True)
        cache = returned_cache(first)
        second = model(tokens[:, 8:], use_cache=True, **{cache_keyword(model): cache})
    assert returned_cache(second) is cache
    assert cache.get_seq_length() == 12
