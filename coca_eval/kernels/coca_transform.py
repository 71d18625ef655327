"""CoCA's transform as one Triton kernel: (q, t) -> (q ∘ rope(q), rope(relu(pair means of t))).

The torch path runs it as five elementwise kernels for t (add, scale, ReLU, cat, rope) and three for q
(rope, rotate-half, product), plus three more for q under the strict variant, each reading and writing
a [tokens, heads, d] tensor. Here one program per token loads that token's q and t rows once, with its
cos/sin row shared by both, and writes q' and k' once. Everything is computed in float32 and rounded
once on the store, so in bf16 it is at least as accurate as the torch ops (which round after each op).

Rows are addressed through strides, so the same kernel reads transformers' [b, heads, n, d] views and
vLLM's flat [T, heads * d] layout; cos/sin come either as full [b, n, r] tables (transformers) or as
vLLM's [positions, cos | sin] cache gathered through the positions. Rope is rotate-half over the first
r = rotary dims (partial rotary: the rest pass through); p-RoPE lives in the tables already. The
coefficient pairs (i, i + d/2) span the whole head, as in the torch path, whatever r is.

Triton decides at decoration time whether a kernel is compiled or interpreted (``TRITON_INTERPRET``),
so the kernel is decorated on first use, once per mode.
"""

from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from coca_eval.kernels import interpreting

SUPPORTED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _coca_transform_rows(
    q_ptr, t_ptr, cos_ptr, sin_ptr, pos_ptr, q_out_ptr, k_out_ptr, seq_len,
    q_sb, q_sn, q_sh, t_sb, t_sn, t_sh, qo_sb, qo_sn, qo_sh, ko_sb, ko_sn, ko_sh, c_sb, c_sn,
    Q_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, ROTARY_DIM: tl.constexpr,
    Q_BLOCK: tl.constexpr, KV_BLOCK: tl.constexpr, DIM_BLOCK: tl.constexpr,
    STRICT: tl.constexpr, HALF_TABLE: tl.constexpr, HAS_POSITIONS: tl.constexpr,
):  # fmt: skip
    """One program per token: all its query heads and all its key/value heads."""
    token = tl.program_id(0)
    batch, pos = token // seq_len, token % seq_len
    dims = tl.arange(0, DIM_BLOCK)  # (D,)
    pair = (dims + HEAD_DIM // 2) % HEAD_DIM  # (D,) coefficient partner over the whole head
    half_r = ROTARY_DIM // 2
    rotated = dims < ROTARY_DIM  # (D,)
    partner = tl.where(rotated, tl.where(dims < half_r, dims + half_r, dims - half_r), dims)  # (D,)
    partner_pair = (partner + HEAD_DIM // 2) % HEAD_DIM  # (D,)
    sign = tl.where(dims < half_r, -1.0, 1.0)  # (D,) rotate-half: -x[i + r/2] first, x[i - r/2] second
    row = tl.load(pos_ptr + token) if HAS_POSITIONS else pos
    col = dims % half_r if HALF_TABLE else dims  # (D,)
    table = batch * c_sb + row * c_sn + col  # (D,)
    cos = tl.load(cos_ptr + table, mask=rotated, other=1.0).to(tl.float32)  # (D,)
    sin = tl.load(sin_ptr + table, mask=rotated, other=0.0).to(tl.float32) * sign  # (D,)

    heads = tl.arange(0, Q_BLOCK)[:, None]  # (H, 1)
    live = (heads < Q_HEADS) & (dims < HEAD_DIM)[None, :]  # (H, D)
    base = q_ptr + batch * q_sb + pos * q_sn + heads * q_sh  # (H, 1)
    x = tl.load(base + dims[None, :], mask=live, other=0.0).to(tl.float32)  # (H, D)
    x_p = tl.load(base + partner[None, :], mask=live, other=0.0).to(tl.float32)  # (H, D)
    if STRICT:  # q_i = q_{i+d/2}: both the value and its rope partner become pair means
        x = (x + tl.load(base + pair[None, :], mask=live, other=0.0).to(tl.float32)) * 0.5
        x_p = (x_p + tl.load(base + partner_pair[None, :], mask=live, other=0.0).to(tl.float32)) * 0.5
    q_rot = x * cos[None, :] + x_p * sin[None, :]  # (H, D)
    out = q_out_ptr + batch * qo_sb + pos * qo_sn + heads * qo_sh + dims[None, :]  # (H, D)
    tl.store(out, (x * q_rot).to(q_out_ptr.dtype.element_ty), mask=live)

    heads = tl.arange(0, KV_BLOCK)[:, None]  # (K, 1)
    live = (heads < KV_HEADS) & (dims < HEAD_DIM)[None, :]  # (K, D)
    base = t_ptr + batch * t_sb + pos * t_sn + heads * t_sh  # (K, 1)
    y = tl.load(base + dims[None, :], mask=live, other=0.0).to(tl.float32)  # (K, D)
    y = tl.maximum((y + tl.load(base + pair[None, :], mask=live, other=0.0).to(tl.float32)) * 0.5, 0.0)
    y_p = tl.load(base + partner[None, :], mask=live, other=0.0).to(tl.float32)  # (K, D)
    y_pp = tl.load(base + partner_pair[None, :], mask=live, other=0.0).to(tl.float32)  # (K, D)
    y_p = tl.maximum((y_p + y_pp) * 0.5, 0.0)  # (K, D) the coefficient at the rope partner
    out = k_out_ptr + batch * ko_sb + pos * ko_sn + heads * ko_sh + dims[None, :]  # (K, D)
    tl.store(out, (y * cos[None, :] + y_p * sin[None, :]).to(k_out_ptr.dtype.element_ty), mask=live)


@functools.cache
def _kernel(interpret: bool):
    """The jitted kernel for the current mode (compiled, or interpreted on CPU)."""
    del interpret  # the cache key: triton.jit reads TRITON_INTERPRET itself
    return triton.jit(_coca_transform_rows)


def kernel_supports(q: torch.Tensor, t: torch.Tensor, rotary_dim: int) -> bool:
    """Shapes and dtypes the kernel handles; anything else goes to the torch ops."""
    head_dim = q.shape[-1]
    return (
        q.dtype in SUPPORTED_DTYPES
        and t.dtype == q.dtype
        and head_dim % 2 == 0
        and t.shape[-1] == head_dim
        and 0 < rotary_dim <= head_dim
        and rotary_dim % 2 == 0
    )


def _unit_last(x: torch.Tensor) -> torch.Tensor:
    return x if x.stride(-1) == 1 else x.contiguous()


def _launch(q, t, cos, sin, positions, q_out, k_out, rows, strict, half_table, rotary_dim, c_sb, c_sn):
    """q/t/outputs as (batch, seq, heads, d)-indexed views; ``rows`` = batch * seq programs."""
    _kernel(interpreting())[(rows,)](
        q, t, cos, sin, positions if positions is not None else q, q_out, k_out, q.shape[1],
        q.stride(0), q.stride(1), q.stride(2), t.stride(0), t.stride(1), t.stride(2),
        q_out.stride(0), q_out.stride(1), q_out.stride(2), k_out.stride(0), k_out.stride(1), k_out.stride(2),
        c_sb, c_sn,
        Q_HEADS=q.shape[2], KV_HEADS=t.shape[2], HEAD_DIM=q.shape[3], ROTARY_DIM=rotary_dim,
        Q_BLOCK=triton.next_power_of_2(q.shape[2]), KV_BLOCK=triton.next_power_of_2(t.shape[2]),
        DIM_BLOCK=triton.next_power_of_2(q.shape[3]), STRICT=strict, HALF_TABLE=half_table,
        HAS_POSITIONS=positions is not None,
    )  # fmt: skip


def fused_coca_transform(
    q: torch.Tensor, t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, strict: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """transformers layout: q (b, h, n, d), t (b, kv, n, d), cos/sin (b or 1, n, r) ->
    (q ∘ rope(q) (b, h, n, d), rope(coefficients of t) (b, kv, n, d)), the fast path's operands."""
    q, t = _unit_last(q), _unit_last(t)
    cos, sin = (_unit_last(x.expand(q.shape[0], -1, -1)) for x in (cos, sin))  # (b, n, r)
    if cos.stride() != sin.stride():
        cos, sin = cos.contiguous(), sin.contiguous()
    q_out, k_out = torch.empty_like(q), torch.empty_like(t)  # same memory layout as the inputs
    swap = lambda x: x.transpose(1, 2)  # noqa: E731  (b, heads, n, d) -> (b, n, heads, d) views
    rows = q.shape[0] * q.shape[2]
    _launch(
        swap(q), swap(t), cos, sin, None, swap(q_out), swap(k_out), rows, strict, False,
        cos.shape[-1], cos.stride(0), cos.stride(1),
    )  # fmt: skip
    return q_out, k_out


def fused_coca_query_key_flat(
    q: torch.Tensor, t: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, head_dim: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """vLLM layout: q [T, h*d], t [T, kv*d], positions [T], cos_sin_cache [P, r] = [cos | sin] ->
    (q ∘ rope(q) [T, h*d], rope(coefficients of t) [T, kv*d]). The projections' pair halves may already
    be equal (vLLM folds the means into the weights): a pair mean of equal halves is exact."""
    tokens, rotary_dim = q.shape[0], cos_sin_cache.shape[-1]
    q4 = _unit_last(q).view(1, tokens, -1, head_dim)  # (1, T, h, d)
    t4 = _unit_last(t).view(1, tokens, -1, head_dim)  # (1, T, kv, d)
    cache = _unit_last(cos_sin_cache)  # (P, r)
    q_out, k_out = torch.empty_like(q4), torch.empty_like(t4)  # (1, T, h, d), (1, T, kv, d)
    _launch(
        q4, t4, cache, cache[:, rotary_dim // 2 :], positions.contiguous(), q_out, k_out, tokens,
        False, True, rotary_dim, 0, cache.stride(0),
    )  # fmt: skip
    return q_out.view(tokens, -1), k_out.view(tokens, -1)
