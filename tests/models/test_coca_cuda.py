"""CoCA on CUDA: the fast path (SDPA on q ∘ rope(q), rope(t)) equals the reference contraction, in fp32
and bf16, and the fused Triton transform equals the torch ops there.

Tolerances:
* fp32: 1e-4 (relative and absolute) on attention outputs of magnitude ~2. Both paths accumulate in
  fp32 but in different orders (SDPA's memory-efficient kernel tiles over keys; the einsum contracts
  over d, then cuBLAS over keys): the rounding differences grow like (N + d) · 2^-24 · |v| ≈ 3e-5 at
  N = 256. TF32 stays off (torch's default for fp32 matmuls), or this bound would not hold.
* bf16: the two paths round differently (the reference rounds its N x N scores, of magnitude ~5, to bf16:
  up to 2e-2 absolute each; flash keeps them in fp32), so they are compared through an fp32 run of the
  same weights: the fast path's bf16 max error must not exceed the reference contraction's (x 1.25, plus
  2e-3 for the rounding of the output itself), and its relative RMS error stays under 5 %. (The max
  error itself is large, up to ~0.3 on outputs of ~1.7: with these sharp random attention weights the
  bf16 projections alone move a few near-tied softmax rows; both paths share that.)
"""

from __future__ import annotations

import pytest
import torch

from coca_eval.kernels import use_coca_kernel
from tests.models.test_coca_parity import attention_layers, rotary, tiny_coca

pytestmark = pytest.mark.gpu
VARIANTS = [
    pytest.param("llama", "slack", id="llama-slack"),
    pytest.param("llama", "strict", id="llama-strict"),
    pytest.param("neox", "slack", id="neox-partial-rotary"),
    pytest.param("neox", "strict", id="neox-strict"),
]


def attend(model, x: torch.Tensor, implementation: str) -> torch.Tensor:
    """First attention layer on hidden states x (b, n, hidden), causal, under ``implementation``."""
    model.config._attn_implementation = implementation
    positions = torch.arange(x.shape[1], device=x.device)[None]  # (1, n)
    try:
        cos_sin = rotary(model)(x, positions)
        return attention_layers(model)[0](x, position_embeddings=cos_sin, attention_mask=None)[0]  # (b, n, H)
    finally:
        model.config._attn_implementation = "sdpa"


def max_error(x: torch.Tensor, reference: torch.Tensor) -> float:
    return (x.float() - reference.float()).abs().max().item()


@pytest.mark.parametrize(("kind", "variant"), VARIANTS)
@torch.inference_mode()
def test_fast_path_equals_reference_fp32(gpu_device, kind, variant):
    model = tiny_coca(kind, coca_variant=variant, max_position_embeddings=512).to(gpu_device)
    x = torch.randn(2, 256, 128, generator=torch.Generator().manual_seed(0)).to(gpu_device)  # (b, n, H)
    fast, eager = attend(model, x, "sdpa"), attend(model, x, "eager")  # (b, n, H) each
    assert fast.abs().max() > 0.5  # weights at std 0.15: outputs of magnitude ~2, not a flat average
    torch.testing.assert_close(fast, eager, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("kind", "variant"), VARIANTS)
@torch.inference_mode()
def test_fast_path_is_no_less_accurate_than_reference_bf16(gpu_device, kind, variant):
    model = tiny_coca(kind, coca_variant=variant, max_position_embeddings=512).to(gpu_device)
    x = torch.randn(2, 256, 128, generator=torch.Generator().manual_seed(0)).to(gpu_device)  # (b, n, H)
    exact = attend(model, x, "sdpa")  # (b, n, H) in fp32
    model.to(torch.bfloat16)
    x16 = x.to(torch.bfloat16)  # (b, n, H)
    fast = attend(model, x16, "sdpa")  # (b, n, H)
    fast_error, eager_error = max_error(fast, exact), max_error(attend(model, x16, "eager"), exact)
    relative_rms = ((fast.float() - exact).norm() / exact.norm()).item()
    print(
        f"bf16 max error vs fp32: fast {fast_error:.2e}, reference {eager_error:.2e}; rms {relative_rms:.2e}"
    )
    assert fast_error <= 1.25 * eager_error + 2e-3
    assert relative_rms <= 0.05


def _transform_inputs(device, dtype, d=128, r=128, heads=32, kv=8, n=512):
    from tests.kernels.test_coca_transform import rope_tables

    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, n, heads, d, generator=g).transpose(1, 2)  # (1, h, n, d)
    t = torch.randn(1, n, kv, d, generator=g).transpose(1, 2)  # (1, kv, n, d)
    cos, sin = rope_tables(1, n, r)  # (1, n, r)
    return [x.to(device, dtype) for x in (q, t, cos, sin)]


@pytest.mark.parametrize("r", [128, 32], ids=["full", "partial"])
@pytest.mark.parametrize("strict", [False, True], ids=["slack", "strict"])
def test_fused_kernel_equals_torch_ops_on_cuda(cuda_only, r, strict):
    """fp32: 1e-5 (the compiled kernel may contract a product and a sum into one FMA where torch
    rounds twice). bf16: the kernel computes in fp32 and rounds once, so each output is within one
    bf16 rounding (relative 2^-8, round to nearest) of the fp32 transform of the same bf16 inputs; the
    torch ops round after every op and are only checked to stay within a few such roundings."""
    from coca_eval.kernels.coca_transform import fused_coca_transform
    from tests.kernels.test_coca_transform import torch_transform

    q, t, cos, sin = _transform_inputs("cuda", torch.float32, r=r)
    exact = torch_transform(q, t, cos, sin, strict)
    fused = fused_coca_transform(q, t, cos, sin, strict)
    for got, want in zip(fused, exact, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    inputs16 = [x.to(torch.bfloat16) for x in (q, t, cos, sin)]
    exact16 = torch_transform(*(x.float() for x in inputs16), strict)  # fp32 maths on bf16 inputs
    fused16 = fused_coca_transform(*inputs16, strict)
    torch16 = torch_transform(*inputs16, strict)
    for kernel_out, torch_out, want in zip(fused16, torch16, exact16, strict=True):
        slack = 1e-5 * want.abs().max()  # fp32 rounding of near-cancelling sums
        assert ((kernel_out.float() - want).abs() <= want.abs() * 2**-8 + slack).all()
        assert ((torch_out.float() - want).abs() <= want.abs() * 2**-5 + 2**-6 * want.abs().max()).all()


@pytest.mark.parametrize(("kind", "variant"), VARIANTS)
@torch.inference_mode()
def test_model_with_fused_kernel_on_cuda(cuda_only, kind, variant):
    """Whole-model logits with the kernel selected: fp32 as the torch path to 1e-4; bf16 no less
    accurate than the torch path against fp32 (x 1.25 + 1e-2 on logits of magnitude ~1)."""
    model = tiny_coca(kind, coca_variant=variant, max_position_embeddings=512).cuda()
    tokens = torch.randint(0, 96, (2, 200), generator=torch.Generator().manual_seed(4)).cuda()  # (b, n)
    exact = model(tokens).logits  # (b, n, V)
    with use_coca_kernel("triton"):
        torch.testing.assert_close(model(tokens).logits, exact, rtol=1e-4, atol=1e-4)
        model.to(torch.bfloat16)
        fused_error = max_error(model(tokens).logits, exact)
    torch_error = max_error(model(tokens).logits, exact)
    print(f"bf16 logits max error vs fp32: fused {fused_error:.2e}, torch ops {torch_error:.2e}")
    assert fused_error <= 1.25 * torch_error + 1e-2
