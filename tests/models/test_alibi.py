"""ALiBi LLaMA against the paper (Press et al., ICLR 2022): slopes in closed form, the blocked attention
against an explicit N x N bias, KV-cache generation, translation invariance, and the refused rope patch.

Models are tiny, fp32, with attention projections drawn at std 0.15 so that the bias visibly matters.
"""

from __future__ import annotations

import pytest
import torch
from tiny_models import sharpen_attention

import coca_eval.models  # noqa: F401  (registers the model types)
from coca_eval.errors import CocaEvalError
from coca_eval.models.alibi import AlibiLlamaConfig, AlibiLlamaForCausalLM, alibi_slopes
from coca_eval.models.alibi.attention import alibi_attention
from coca_eval.models.layer_cache import cache_keyword, returned_cache
from coca_eval.models.rope import apply_rope_patch, parse_rope

VOCAB = 96


def tiny_alibi(heads: int = 4, kv_heads: int = 2, seed: int = 0) -> AlibiLlamaForCausalLM:
    config = AlibiLlamaConfig(
        vocab_size=VOCAB,
        hidden_size=16 * heads,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    return sharpen_attention(AlibiLlamaForCausalLM(config).eval())


def ids(batch: int = 1, length: int = 100, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def set_block_rows(model: AlibiLlamaForCausalLM, rows: int) -> None:
    for layer in model.model.layers:
        layer.self_attn.block_rows = rows


def dense_reference(q, k, v, slopes, first_row: int, scaling: float) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q·k·scale - m_h (i - j), causal) · v with the whole N x N bias written out, in float64."""
    q, k, v = q.double(), k.double(), v.double()  # (b, h, m, d), (b, kv, n, d) x2
    k, v = (z.repeat_interleave(q.shape[1] // z.shape[1], dim=1) for z in (k, v))  # (b, h, n, d)
    i = torch.arange(first_row, first_row + q.shape[2], dtype=torch.float64)[:, None]  # (m, 1)
    j = torch.arange(k.shape[2], dtype=torch.float64)[None, :]  # (1, n)
    bias = -torch.tensor(slopes, dtype=torch.float64)[:, None, None] * (i - j)  # (h, m, n)
    scores = (q @ k.transpose(-1, -2)) * scaling + bias  # (b, h, m, n)
    probs = scores.masked_fill(j > i, float("-inf")).softmax(-1)  # (b, h, m, n)
    return (probs @ v).transpose(1, 2), probs  # (b, m, h, d), (b, h, m, n)


# ---- slopes ----


@pytest.mark.parametrize(
    ("heads", "exponents"),
    [
        (4, [-2, -4, -6, -8]),  # 2^(-8k/4)
        (8, [-1, -2, -3, -4, -5, -6, -7, -8]),  # 2^(-8k/8)
        (6, [-2, -4, -6, -8, -1, -3]),  # the 4-head slopes, then 2^(-8k/8) for k = 1, 3
        (12, [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5]),  # 8-head, then 16-head k = 1, 3, 5, 7
    ],
)
def test_slopes_are_the_papers_geometric_sequence(heads, exponents):
    assert alibi_slopes(heads) == pytest.approx([2.0**e for e in exponents], rel=1e-12)


def test_power_of_two_slopes_have_ratio_equal_to_the_first_slope():
    slopes = alibi_slopes(16)
    ratios = [b / a for a, b in zip(slopes, slopes[1:], strict=False)]
    assert slopes[0] == pytest.approx(2 ** (-0.5)) and ratios == pytest.approx([slopes[0]] * 15)


# ---- the blocked attention ----


@pytest.mark.parametrize("block_rows", [1, 5, 16, 1000])
@pytest.mark.parametrize(("heads", "kv_heads", "first_row"), [(4, 2, 0), (6, 3, 0), (4, 1, 9)])
def test_blocked_attention_equals_the_dense_bias(block_rows, heads, kv_heads, first_row):
    """GQA and a query block that starts after cached keys (first_row > 0), as in decoding."""
    attention = tiny_alibi(heads, kv_heads).model.layers[0].self_attn
    attention.block_rows = block_rows
    gen = torch.Generator().manual_seed(4)
    m, n, d = 23, 23 + first_row, 16
    q = torch.randn(2, heads, m, d, generator=gen)
    k, v = torch.randn(2, 2, kv_heads, n, d, generator=gen)
    expected, expected_probs = dense_reference(q, k, v, alibi_slopes(heads), first_row, 0.25)
    for implementation in ("sdpa", "eager"):
        attention.config._attn_implementation = implementation
        out, probs = alibi_attention(attention, q, k, v, None, first_row=first_row, scaling=0.25)
        assert (out.double() - expected).abs().max() <= 1e-5
        assert probs is None if implementation == "sdpa" else (probs - expected_probs).abs().max() <= 1e-6


def test_the_bias_changes_the_result():
    """Sanity of the reference itself: without the bias the same inputs give another output."""
    attention = tiny_alibi().model.layers[0].self_attn
    q, k, v = torch.randn(3, 1, 4, 12, 16, generator=torch.Generator().manual_seed(5))
    out, _ = alibi_attention(attention, q, k[:, :2], v[:, :2], None, first_row=0, scaling=0.25)
    no_bias, _ = dense_reference(q, k[:, :2], v[:, :2], [0.0] * 4, 0, 0.25)
    assert (out.double() - no_bias).abs().max() > 1e-2


def test_model_logits_do_not_depend_on_the_block_size():
    model = tiny_alibi()
    with torch.no_grad():
        set_block_rows(model, 10**9)
        whole = model(ids()).logits  # one call per layer
        for rows in (7, 64):
            set_block_rows(model, rows)
            assert (model(ids()).logits - whole).abs().max() <= 1e-5


def test_output_attentions_returns_the_biased_weights():
    """The weights transformers records are those of the dense reference on layer 0's own q, k, v."""
    model, tokens = tiny_alibi(), ids(length=12)
    layer = model.model.layers[0]
    with torch.no_grad():
        weights = model(tokens, output_attentions=True).attentions[0]  # (1, h, 12, 12)
        x = layer.input_layernorm(model.model.embed_tokens(tokens))  # (1, 12, H)
        q, k, v = (proj(x).view(1, 12, -1, 16).transpose(1, 2) for proj in (
            layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj
        ))  # fmt: skip
    _, expected = dense_reference(q, k, v, alibi_slopes(4), 0, layer.self_attn.scaling)
    assert weights.shape == (1, 4, 12, 12) and (weights.double() - expected).abs().max() <= 1e-6


# ---- cache, invariance ----


def test_greedy_generation_with_cache_equals_step_by_step_argmax():
    model = tiny_alibi()
    prompt = ids(length=30)
    with torch.no_grad():
        cached = model.generate(prompt, max_new_tokens=10, do_sample=False, min_new_tokens=10)[0, 30:]
        tokens = prompt
        for _ in range(10):
            step = model(tokens, use_cache=False).logits[0, -1].argmax()
            tokens = torch.cat((tokens, step.view(1, 1)), dim=1)
    assert cached.tolist() == tokens[0, 30:].tolist()


def test_cached_logits_equal_a_full_forward():
    model = tiny_alibi()
    sequence = ids(length=40)
    with torch.no_grad():
        full = model(sequence).logits
        first = model(sequence[:, :25], use_cache=True)
        cached = {cache_keyword(model): returned_cache(first)}
        rest = model(sequence[:, 25:], use_cache=True, **cached).logits
    assert (torch.cat((first.logits, rest), dim=1) - full).abs().max() <= 1e-5


def test_logits_are_invariant_to_a_shift_of_positions():
    """ALiBi depends on i - j only: explicit position ids shifted by 1000 change nothing, and neither does
    left padding, which moves every real token right by the pad count (the padding mask is honoured)."""
    model = tiny_alibi()
    sequence = ids(length=20)
    padded = torch.cat((torch.zeros(1, 5, dtype=torch.long), sequence), dim=1)
    mask = torch.cat((torch.zeros(1, 5, dtype=torch.long), torch.ones(1, 20, dtype=torch.long)), dim=1)
    with torch.no_grad():
        plain = model(sequence).logits
        shifted = model(sequence, position_ids=torch.arange(20)[None] + 1000).logits
        left_padded = model(padded, attention_mask=mask).logits[:, 5:]
        unmasked = model(padded).logits[:, 5:]
    assert (shifted - plain).abs().max() <= 1e-6
    assert (left_padded - plain).abs().max() <= 1e-5
    assert (unmasked - plain).abs().max() > 1e-3  # the pads do matter when not masked: the mask is used


# ---- the harness side ----


def test_rope_patches_are_refused_in_one_line():
    config = tiny_alibi().config
    assert apply_rope_patch(config, parse_rope("none")) is config
    with pytest.raises(CocaEvalError, match="ALiBi has no rotary embedding"):
        apply_rope_patch(config, parse_rope("dynamic:2"))


def test_state_dict_is_llama_s_and_there_is_no_rotary_table():
    model = tiny_alibi()
    assert not any("rotary" in name for name in model.state_dict())
    assert model.model.rotary_emb(torch.zeros(1, 3, 64), torch.arange(3)[None]) is None
    assert model.config.alibi and "alibi" not in model.config.to_dict()
