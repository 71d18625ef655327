"""CoCA attention against the paper: fast path vs the reference contraction, slack vs strict, the closed
form of eq. 18, an independent N x N x d evaluation of eq. 11, KV cache, p-RoPE, rope patches, save/load.

Models are tiny, fp32, head_dim 32, with attention weights drawn at std 0.15: at the default 0.02 the
CoCA and plain scores are nearly flat and a wrong formula could still pass.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

import coca_eval.models  # noqa: F401  (registers the CoCA model types)
from coca_eval.models.coca import (
    CocaLlamaConfig,
    CocaLlamaForCausalLM,
    CocaNeoXConfig,
    CocaNeoXForCausalLM,
    register,
)
from coca_eval.models.layer_cache import cache_keyword, returned_cache
from coca_eval.models.rope import apply_rope_patch, parse_rope

VOCAB = 96
BASE = 10000.0
SHAPE = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=192, num_hidden_layers=2)
SHAPE["num_attention_heads"] = 4


def tiny_coca(kind: str = "llama", seed: int = 0, **overrides) -> torch.nn.Module:
    """A random CoCA model (head_dim 32) whose attention projections have std 0.15."""
    if kind == "llama":
        config = CocaLlamaConfig(
            **{**SHAPE, "num_key_value_heads": 2, "max_position_embeddings": 96, **overrides}
        )
        model_class = CocaLlamaForCausalLM
    else:
        config = CocaNeoXConfig(**{**SHAPE, "rotary_pct": 0.5, "max_position_embeddings": 96, **overrides})
        model_class = CocaNeoXForCausalLM
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if any(p in name for p in ("q_proj", "t_proj", "v_proj", "query_key_value")):
                param.normal_(0.0, 0.15)
    return model


def attention_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    base = model.model if hasattr(model, "model") else model.gpt_neox
    return [getattr(layer, "self_attn", None) or layer.attention for layer in base.layers]


def rotary(model: torch.nn.Module) -> torch.nn.Module:
    return model.model.rotary_emb if hasattr(model, "model") else model.gpt_neox.rotary_emb


def ids(batch: int = 2, length: int = 24, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def run_attention(model, x: torch.Tensor, implementation: str, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
    """One attention layer on hidden states x (positions 0..n-1, causal), under a given implementation."""
    model.config._attn_implementation = implementation
    positions = torch.arange(x.shape[1])[None]
    cos_sin = rotary(model)(x, positions)
    try:
        return attention_layers(model)[0](x, position_embeddings=cos_sin, attention_mask=None, **kwargs)
    finally:
        model.config._attn_implementation = "sdpa"


# ---- an independent evaluation of the paper's formulas, in float64, with explicit angles ----


def rope_literal(x: torch.Tensor, rotary_dims: int, fraction: float = 1.0) -> torch.Tensor:
    """Rotate pair (j, j + r/2) of the first r dims of x[..., n, :] by n * base^(-2j/r); p-RoPE zeroes
    the angles of all but the int(p * r // 2) highest frequencies."""
    out, half = x.clone(), rotary_dims // 2
    positions = torch.arange(x.shape[-2], dtype=torch.float64)
    for j in range(half):
        theta = BASE ** (-2 * j / rotary_dims) if j < int(fraction * rotary_dims // 2) else 0.0
        cos, sin = torch.cos(positions * theta)[:, None], torch.sin(positions * theta)[:, None]
        a, b = x[..., j : j + 1], x[..., j + half : j + half + 1]
        out[..., j : j + 1], out[..., j + half : j + half + 1] = a * cos - b * sin, a * sin + b * cos
    return out


def project_qtv(model, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, raw t and v per head [h, n, d] in float64 from layer 0's weights (kv heads repeated)."""
    attn, x, heads = attention_layers(model)[0], x[0].double(), model.config.num_attention_heads
    d = model.config.hidden_size // heads
    if hasattr(attn, "t_proj"):
        q = (x @ attn.q_proj.weight.double().T).view(-1, heads, d)
        t = (x @ attn.t_proj.weight.double().T).view(x.shape[0], -1, d)
        v = (x @ attn.v_proj.weight.double().T).view(x.shape[0], -1, d)
        t, v = (z.repeat_interleave(heads // z.shape[1], dim=1) for z in (t, v))
    else:
        fused = x @ attn.query_key_value.weight.double().T + attn.query_key_value.bias.double()
        q, t, v = fused.view(x.shape[0], heads, 3 * d).split(d, dim=-1)
    return q.transpose(0, 1), t.transpose(0, 1), v.transpose(0, 1)


def halves_tied(z: torch.Tensor) -> torch.Tensor:
    a, b = z.chunk(2, dim=-1)
    return torch.cat(((a + b) / 2, (a + b) / 2), dim=-1)


def literal_scores(model, x: torch.Tensor, strict: bool, fraction: float = 1.0) -> torch.Tensor:
    """Eq. 8-11 as written: keys K[m, n] = q_m ∘ f(t_n, n) materialised, score = <f(q_m, m), K[m, n]>/√d."""
    q, t, _ = project_qtv(model, x)
    d = q.shape[-1]
    rotary_dims = int(d * model.config.rope_parameters.get("partial_rotary_factor", 1.0))
    t = halves_tied(t).clamp(min=0)  # eq. 7 with rotate-half pairs (i, i + d/2)
    q = halves_tied(q) if strict else q
    keys = q[:, :, None, :] * rope_literal(t, rotary_dims, fraction)[:, None, :, :]  # [h, m, n, d]
    return (rope_literal(q, rotary_dims, fraction)[:, :, None, :] * keys).sum(-1) / d**0.5  # [h, m, n]


def causal_softmax(scores: torch.Tensor) -> torch.Tensor:
    n = scores.shape[-1]
    return scores.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")).softmax(-1)


# ---- tests ----


@pytest.mark.parametrize("kind", ["llama", "neox"])
@pytest.mark.parametrize("variant", ["slack", "strict"])
def test_fast_path_equals_eager_reference(kind, variant):
    model = tiny_coca(kind, coca_variant=variant)
    x = torch.randn(1, 40, 128, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        fast, no_weights = run_attention(model, x, "sdpa")
        eager, weights = run_attention(model, x, "eager")
        logits_fast = model(ids()).logits
        model.config._attn_implementation = "eager"
        logits_eager = model(ids()).logits
    assert no_weights is None and weights.shape == (1, 4, 40, 40)
    assert (fast - eager).abs().max() <= 1e-5
    assert (logits_fast - logits_eager).abs().max() <= 1e-5 * logits_eager.abs().max()


@pytest.mark.parametrize("kind", ["llama", "neox"])
@pytest.mark.parametrize("variant", ["slack", "strict"])
def test_attention_weights_equal_the_literal_paper_formula(kind, variant):
    model = tiny_coca(kind, coca_variant=variant)
    x = torch.randn(1, 20, 128, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        _, weights = run_attention(model, x, "sdpa", output_attentions=True)
    expected = causal_softmax(literal_scores(model, x, strict=variant == "strict"))
    assert (weights[0].double() - expected).abs().max() <= 1e-5


def test_strict_equals_the_closed_form_of_eq_18():
    """Strict score = Σ_j t_j |q_j|² cos((m - n) θ_j) / √d over rope pairs j, with q the tied query."""
    model = tiny_coca("llama", coca_variant="strict")
    x = torch.randn(1, 30, 128, generator=torch.Generator().manual_seed(4))
    q, t, _ = project_qtv(model, x)
    half = q.shape[-1] // 2
    q_tied, coeff = halves_tied(q), halves_tied(t).clamp(min=0)[..., :half]  # [h, n, d], [h, n, d/2]
    q_norm2 = q_tied[..., :half] ** 2 + q_tied[..., half:] ** 2  # |q_j|² of pair j: [h, m, d/2]
    theta = BASE ** (-2 * torch.arange(half, dtype=torch.float64) / (2 * half))
    offset = torch.arange(30.0, dtype=torch.float64)[:, None] - torch.arange(30.0, dtype=torch.float64)
    cosines = torch.cos(offset[..., None] * theta)  # [m, n, d/2]
    closed = torch.einsum("hmj,hnj,mnj->hmn", q_norm2, coeff, cosines) / (2 * half) ** 0.5
    with torch.no_grad():
        _, weights = run_attention(model, x, "eager")
    assert (weights[0].double() - causal_softmax(closed)).abs().max() <= 1e-5


def test_slack_and_strict_differ_unless_the_query_constraint_holds():
    slack, strict = tiny_coca("llama"), tiny_coca("llama", coca_variant="strict")
    with torch.no_grad():
        assert (slack(ids()).logits - strict(ids()).logits).abs().max() > 1e-2
        for model in (slack, strict):  # impose q_i = q_{i+d/2} on the weights themselves
            for attn in attention_layers(model):
                w = attn.q_proj.weight.view(4, 2, 16, 128)
                w[:, 1] = w[:, 0]
        assert (slack(ids()).logits - strict(ids()).logits).abs().max() <= 1e-5


def test_coca_differs_from_plain_attention_with_the_same_weights():
    """Guards the test models themselves: with t_proj used as k_proj, plain attention is far off."""
    coca = tiny_coca("llama")
    plain = LlamaForCausalLM(LlamaConfig(**{**coca.config.to_dict(), "model_type": "llama"})).eval()
    state = {k.replace("t_proj", "k_proj"): v for k, v in coca.state_dict().items()}
    plain.load_state_dict(state)
    with torch.no_grad():
        assert (coca(ids()).logits - plain(ids()).logits).abs().max() > 0.1


@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_cached_generation_equals_full_recompute(kind):
    model = tiny_coca(kind)
    prompt = ids(batch=1, length=9)
    out = model.generate(
        prompt, max_new_tokens=10, do_sample=False, output_scores=True, return_dict_in_generate=True
    )
    assert out.sequences.shape[1] == 19
    with torch.no_grad():
        for step, scores in enumerate(out.scores):
            full = model(out.sequences[:, : 9 + step], use_cache=False).logits[:, -1]
            assert (full - scores).abs().max() <= 1e-4
            assert full.argmax(-1).item() == out.sequences[0, 9 + step].item()


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_chunked_prefill_with_cache_equals_one_forward(implementation):
    model = tiny_coca("neox")
    model.config._attn_implementation = implementation
    tokens = ids(batch=1, length=30)
    with torch.no_grad():
        full = model(tokens).logits
        first = model(tokens[:, :17], use_cache=True)
        cached = {cache_keyword(model): returned_cache(first)}
        rest = model(tokens[:, 17:], use_cache=True, **cached).logits
    assert (rest - full[:, 17:]).abs().max() <= 1e-4


def test_left_padding_masks_alike_on_both_paths():
    model = tiny_coca("llama")
    tokens, mask = ids(), torch.ones(2, 24, dtype=torch.long)
    mask[1, :5] = 0
    with torch.no_grad():
        fast = model(tokens, attention_mask=mask).logits
        model.config._attn_implementation = "eager"
        eager = model(tokens, attention_mask=mask).logits
    assert (fast[:, 5:] - eager[:, 5:]).abs().max() <= 1e-5 * eager.abs().max()


def test_output_attentions_uses_the_reference_path_under_sdpa():
    model = tiny_coca("llama")
    with torch.no_grad():
        out = model(ids(), output_attentions=True)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (2, 4, 24, 24)
    assert torch.allclose(out.attentions[0].sum(-1), torch.ones(2, 4, 24))
    assert out.attentions[0][0, 0].triu(1).abs().max() == 0


def test_nope_scores_do_not_depend_on_position():
    """p = 0: the score is Σ q_i² t_i / √d, so shifting every position changes nothing; p = 1 does."""
    tokens, shifted = ids(), torch.arange(24)[None] * 3 + 11
    for fraction, moves in ((0.0, False), (1.0, True)):
        model = tiny_coca("llama", rope_fraction=fraction)
        with torch.no_grad():
            delta = (model(tokens).logits - model(tokens, position_ids=shifted).logits).abs().max()
        assert bool(delta > 1e-3) is moves


@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_p_rope_keeps_only_the_highest_frequencies(kind):
    x = torch.randn(1, 20, 128, generator=torch.Generator().manual_seed(5))
    model = tiny_coca(kind, rope_fraction=0.5)
    with torch.no_grad():
        _, weights = run_attention(model, x, "eager")
    expected = causal_softmax(literal_scores(model, x, strict=False, fraction=0.5))
    assert (weights[0].double() - expected).abs().max() <= 1e-5
    # the same as RoPE whose lowest frequencies are zeroed ("Round and Round We Go!", App. C: timescale = inf)
    reference = tiny_coca(kind)
    table = rotary(reference)
    kept = int(0.5 * table.inv_freq.numel() * 2 // 2)
    table.inv_freq[kept:] = 0.0
    with torch.no_grad():
        assert (model(ids()).logits - reference(ids()).logits).abs().max() <= 1e-5


def test_rope_patches_rotate_q_and_t_alike():
    """Position interpolation x2 at positions 2n must equal no patch at positions n, for q and t both."""
    plain = tiny_coca("llama")
    config = apply_rope_patch(CocaLlamaConfig(**plain.config.to_dict()), parse_rope("linear:2"))
    patched = CocaLlamaForCausalLM(config).eval()
    patched.load_state_dict(plain.state_dict())
    positions = torch.arange(24)[None]
    with torch.no_grad():
        same = patched(ids(), position_ids=2 * positions).logits - plain(ids(), position_ids=positions).logits
        moved = patched(ids(), position_ids=positions).logits - plain(ids(), position_ids=positions).logits
    assert same.abs().max() <= 1e-5 and moved.abs().max() > 1e-3


@pytest.mark.parametrize("kind", ["llama", "neox"])
def test_save_and_load_round_trip(kind, tmp_path):
    model = tiny_coca(kind, coca_variant="strict", rope_fraction=0.75)
    model.save_pretrained(tmp_path)
    register()  # a second registration is harmless
    loaded = AutoModelForCausalLM.from_pretrained(tmp_path).eval()
    assert type(loaded) is type(model)
    assert (loaded.config.coca_variant, loaded.config.rope_fraction) == ("strict", 0.75)
    assert type(AutoConfig.from_pretrained(tmp_path)) is type(model.config)
    with torch.no_grad():
        assert torch.equal(loaded(ids()).logits, model(ids()).logits)


def test_registration_teaches_the_auto_classes_without_vllm_or_opencompass():
    """``import coca_eval`` registers nothing (it stays free of transformers, see tests/test_startup.py);
    ``register_model_types``, which every loader calls first, registers every model type, in a fresh
    interpreter and without pulling vLLM or OpenCompass in."""
    code = (
        "import sys\n"
        "from coca_eval.models.registration import register_model_types\n"
        "register_model_types()\n"
        "from transformers import AutoConfig\n"
        "kinds = ('coca_llama', 'coca_gpt_neox', 'prope_llama', 'alibi_llama')\n"
        "print(','.join(type(AutoConfig.for_model(kind)).__name__ for kind in kinds))\n"
        "print([m for m in ('vllm', 'opencompass') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["CocaLlamaConfig,CocaNeoXConfig,PRopeLlamaConfig,AlibiLlamaConfig", "[]"]
