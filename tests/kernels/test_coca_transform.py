"""The fused CoCA Triton kernel equals the torch ops it replaces, run on CPU by Triton's interpreter.

Runs wherever Triton is importable (the ``dev`` extra installs it; no GPU needed): every test sets
``TRITON_INTERPRET=1`` for itself. All in float32, where kernel and torch ops do the same arithmetic
in the same order, so the tolerance is a few float32 ulps (1e-6 absolute on O(1) values).
"""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_rope  # noqa: E402
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_rope  # noqa: E402

from coca_eval.kernels import coca_transform, use_coca_kernel  # noqa: E402
from coca_eval.kernels.coca_transform import (  # noqa: E402
    fused_coca_query_key_flat,
    fused_coca_transform,
    kernel_supports,
)
from coca_eval.models.coca.attention import collinear_coefficients, tie_query_halves  # noqa: E402
from coca_eval.models.frequencies import keep_highest_frequencies  # noqa: E402

TOL = dict(rtol=1e-6, atol=1e-6)


def spy(calls: list, fn):
    """``fn``, recording each call in ``calls``."""

    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    return wrapped


@pytest.fixture(autouse=True)
def _interpreted(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")


def rope_tables(batch: int, n: int, rotary: int, fraction: float = 1.0, scaling: float = 1.0):
    """transformers-style cos/sin (batch, n, r) in the cat(freqs, freqs) layout, p-RoPE applied."""
    inv_freq = 1.0 / 10000 ** (torch.arange(0, rotary, 2).float() / rotary)  # (r/2,)
    positions = torch.arange(n).float()[None, :, None] + torch.arange(batch)[:, None, None]  # (batch, n, 1)
    angles = positions * inv_freq  # (batch, n, r/2)
    angles = torch.cat((angles, angles), dim=-1)  # (batch, n, r)
    cos, sin = angles.cos() * scaling, angles.sin() * scaling  # (batch, n, r) each
    return keep_highest_frequencies(cos, sin, fraction, scaling)


def torch_transform(q, t, cos, sin, strict):
    """The torch ops of the CoCA fast path: (q ∘ rope(q), rope(coefficients)); NeoX's rope rotates the
    first r dims only and equals LLaMA's when r = d."""
    rope = llama_rope if cos.shape[-1] == q.shape[-1] else neox_rope
    q = tie_query_halves(q) if strict else q  # (b, h, n, d)
    q_rot, t_rot = rope(q, collinear_coefficients(t.clone()), cos, sin)  # (b, h, n, d), (b, kv, n, d)
    return q * q_rot, t_rot


SHAPES = [  # batch, heads, kv heads, n, d, rotary dims
    pytest.param(2, 4, 2, 7, 16, 16, id="gqa"),
    pytest.param(1, 3, 3, 5, 32, 32, id="mha-odd-heads"),
    pytest.param(2, 4, 1, 6, 32, 8, id="partial-rotary-quarter"),
    pytest.param(1, 2, 2, 4, 80, 20, id="head-dim-80-rotary-20"),
    pytest.param(3, 8, 2, 3, 64, 64, id="gqa-4"),
]


@pytest.mark.parametrize("strict", [False, True], ids=["slack", "strict"])
@pytest.mark.parametrize(("b", "h", "kv", "n", "d", "r"), SHAPES)
def test_fused_transform_equals_torch_ops(b, h, kv, n, d, r, strict):
    torch.manual_seed(0)
    q = torch.randn(b, n, h, d).transpose(1, 2)  # (b, h, n, d), the projections' transposed view
    t = torch.randn(b, n, kv, d).transpose(1, 2)  # (b, kv, n, d)
    cos, sin = rope_tables(1, n, r)  # (1, n, r): broadcast over the batch, as transformers passes it
    assert kernel_supports(q, t, r)
    query, key = fused_coca_transform(q, t, cos, sin, strict)  # (b, h, n, d), (b, kv, n, d)
    expected_query, expected_key = torch_transform(q, t, cos, sin, strict)
    torch.testing.assert_close(query, expected_query, **TOL)
    torch.testing.assert_close(key, expected_key, **TOL)
    assert not torch.allclose(key, t) and not torch.allclose(query, q)  # something was really transformed
    assert query.stride() == q.stride()  # the same memory layout the torch ops would give


@pytest.mark.parametrize(("fraction", "scaling"), [(0.5, 1.0), (0.25, 1.3), (0.0, 1.0)])
def test_p_rope_and_rope_scaling_come_through_the_tables(fraction, scaling):
    """p-RoPE's frozen frequencies and YaRN-style attention scaling live in cos/sin; per-batch tables."""
    torch.manual_seed(1)
    q, t = torch.randn(2, 4, 9, 32), torch.randn(2, 2, 9, 32)  # (b, h, n, d), (b, kv, n, d)
    cos, sin = rope_tables(2, 9, 32, fraction, scaling)  # (2, n, r): a different table per sequence
    query, key = fused_coca_transform(q, t, cos, sin, strict=False)
    expected_query, expected_key = torch_transform(q, t, cos, sin, strict=False)
    torch.testing.assert_close(query, expected_query, **TOL)
    torch.testing.assert_close(key, expected_key, **TOL)


def test_kernel_declines_what_it_does_not_handle():
    q, t = torch.randn(1, 2, 3, 16), torch.randn(1, 2, 3, 16)
    assert not kernel_supports(q, t, 0)  # no rotary dims
    assert not kernel_supports(q, t, 6 + 1)  # odd rotary dims
    assert not kernel_supports(q.double(), t.double(), 16)  # float64
    assert not kernel_supports(q, t.half(), 16)  # mixed dtypes


class RotaryEmbedding(torch.nn.Module):
    """vLLM's rotary embedding as the plugin sees it: a [positions, cos | sin] table, neox style,
    rotating the first ``rotary_dim`` dims of each head in place (its forward_native arithmetic)."""

    def __init__(self, head_size: int, rotary_dim: int, max_positions: int = 64) -> None:
        super().__init__()
        self.head_size, self.rotary_dim, self.is_neox_style = head_size, rotary_dim, True
        inv_freq = 1.0 / 10000 ** (torch.arange(0, rotary_dim, 2).float() / rotary_dim)  # (r/2,)
        angles = torch.arange(max_positions).float()[:, None] * inv_freq  # (P, r/2)
        self.cos_sin_cache = torch.cat((angles.cos(), angles.sin()), dim=-1)  # (P, r)

    def forward(self, positions, query, key):
        cos, sin = self.cos_sin_cache[positions][:, None].chunk(2, dim=-1)  # (T, 1, r/2) each
        for x in (query, key):
            heads = x.view(x.shape[0], -1, self.head_size)  # (T, heads, d), a view
            x1, x2 = heads[..., : self.rotary_dim].chunk(2, dim=-1)  # (T, heads, r/2) each
            rotated = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)  # (T, heads, r)
            heads[..., : self.rotary_dim] = rotated
        return query, key


@pytest.mark.parametrize(("d", "r"), [(32, 32), (32, 16)], ids=["full", "partial"])
def test_vllm_flat_layout_equals_the_plugin_torch_path(d, r, monkeypatch):
    """The plugin's query/key step with the fused kernel selected == its torch path (folded weights:
    the projections' pair halves are already equal)."""
    from coca_eval.models.vllm_plugin.ops import coca_query_key

    torch.manual_seed(2)
    rotary = RotaryEmbedding(d, r)
    half = torch.randn(11, 6, d // 2)  # [T, h + kv, d/2]: folded projections yield equal halves
    qt = torch.cat((half, half), dim=-1).reshape(11, -1)  # [T, (h + kv) d]
    q, t = qt.split([4 * d, 2 * d], dim=-1)  # [T, h*d], [T, kv*d]
    positions = torch.tensor([0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 9])  # [T]: two sequences in one batch
    expected = coca_query_key(q.clone(), t.clone(), positions, rotary)  # [T, h*d], [T, kv*d]
    direct = fused_coca_query_key_flat(q, t, positions, rotary.cos_sin_cache, d)
    calls = []
    monkeypatch.setattr(coca_transform, "fused_coca_query_key_flat", spy(calls, fused_coca_query_key_flat))
    with use_coca_kernel("triton"):
        routed = coca_query_key(q.clone(), t.clone(), positions, rotary)
    assert len(calls) == 1  # the plugin took the fused path
    for got in (direct, routed):
        torch.testing.assert_close(got[0], expected[0], **TOL)
        torch.testing.assert_close(got[1], expected[1], **TOL)
