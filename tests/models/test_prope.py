"""p-RoPE LLaMA ("Round and Round We Go!", §6.1): the lowest frequencies stay unrotated, p = 1 is LLaMA
bit for bit, p = 0 (NoPE) ignores positions entirely, and the evaluation-time rope patches still apply.

Note that a uniform shift of every position leaves RoPE's scores unchanged too (they depend on m - n), up
to float rounding; what tells NoPE from RoPE is a change of the distances, e.g. positions stretched x3.
"""

from __future__ import annotations

import pytest
import torch
from tiny_models import sharpen_attention
from transformers import LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

import coca_eval.models  # noqa: F401  (registers the model types)
from coca_eval.models.prope import PRopeLlamaConfig, PRopeLlamaForCausalLM
from coca_eval.models.rope import apply_rope_patch, parse_rope

VOCAB = 96
SHAPE = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=192, num_hidden_layers=2)
SHAPE.update(num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)  # head_dim 32


def tiny_prope(fraction: float, seed: int = 0, **overrides) -> PRopeLlamaForCausalLM:
    torch.manual_seed(seed)
    config = PRopeLlamaConfig(**{**SHAPE, "rope_fraction": fraction, **overrides})
    return sharpen_attention(PRopeLlamaForCausalLM(config).eval())


def ids(length: int = 40, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (1, length), generator=torch.Generator().manual_seed(seed))


def logits_at(model, positions: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(ids(positions.shape[-1]), position_ids=positions[None]).logits


def test_nope_ignores_positions_and_rope_does_not():
    positions = torch.arange(40)
    nope, rope = tiny_prope(0.0), tiny_prope(1.0)
    assert torch.equal(logits_at(nope, positions + 1000), logits_at(nope, positions))
    assert torch.equal(logits_at(nope, positions * 3), logits_at(nope, positions))
    base = logits_at(rope, positions)
    assert (logits_at(rope, positions + 1000) - base).abs().max() <= 1e-3 * base.abs().max()  # relative
    assert (logits_at(rope, positions * 3) - base).abs().max() > 1e-2 * base.abs().max()


@pytest.mark.parametrize("patch", ["none", "linear:4", "dynamic:2", "yarn:4"])
def test_lowest_quarter_unrotated_highest_three_quarters_are_llama_s(patch):
    """head_dim 32: 16 frequencies, p = 0.75 keeps the 12 highest (indices 0..11 of inv_freq)."""
    config = apply_rope_patch(PRopeLlamaConfig(**SHAPE, rope_fraction=0.75), parse_rope(patch))
    model = PRopeLlamaForCausalLM(config)
    x, positions = torch.zeros(1, 200, 32), torch.arange(200)[None]  # past the trained 64 positions
    cos, sin = model.model.rotary_emb(x, positions)  # (1, 200, 32) each
    llama_cos, llama_sin = LlamaRotaryEmbedding(config)(x, positions)
    frozen = torch.tensor([12, 13, 14, 15, 28, 29, 30, 31])
    kept = torch.tensor([i for i in range(32) if i not in frozen.tolist()])
    scale = model.model.rotary_emb.attention_scaling  # YaRN scales the whole table, frozen pairs too
    assert torch.equal(cos[..., frozen], torch.full_like(cos[..., frozen], scale))
    assert torch.equal(sin[..., frozen], torch.zeros_like(sin[..., frozen]))
    assert torch.equal(cos[..., kept], llama_cos[..., kept]) and torch.equal(
        sin[..., kept], llama_sin[..., kept]
    )
    assert (llama_sin[..., frozen]).abs().max() > 1e-3  # LLaMA itself does rotate those


def test_p_one_is_llama_bit_for_bit():
    prope = tiny_prope(1.0)
    llama = LlamaForCausalLM(prope.config).eval()
    llama.load_state_dict(prope.state_dict())
    with torch.no_grad():
        assert torch.equal(prope(ids()).logits, llama(ids()).logits)


def test_p_three_quarters_differs_from_llama_with_the_same_weights():
    prope = tiny_prope(0.75)
    llama = LlamaForCausalLM(prope.config).eval()
    llama.load_state_dict(prope.state_dict())
    with torch.no_grad():
        assert (prope(ids()).logits - llama(ids()).logits).abs().max() > 1e-3


def test_layers_stay_plain_llama_so_the_fast_scoring_paths_apply():
    from coca_eval.backends.tail import supports_tail_rows

    assert supports_tail_rows(tiny_prope(0.75))


def test_rope_fraction_outside_the_unit_interval_is_rejected():
    with pytest.raises(Exception, match="rope_fraction must lie in"):  # huggingface_hub wraps the ValueError
        PRopeLlamaConfig(**SHAPE, rope_fraction=1.5)
