"""The fused CoCA kernel compiles for Hopper (sm_90: H100, H200) without a GPU.

Triton's compiler lowers to PTX and assembles a cubin on the host, so code-generation errors that the
CPU interpreter cannot see (it runs the Python body with numpy) are caught here, before any GPU time.
"""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")


@pytest.mark.parametrize(("dtype", "vllm_layout"), [("fp32", False), ("bf16", False), ("bf16", True)])
def test_kernel_compiles_for_sm90(monkeypatch, dtype, vllm_layout):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from coca_eval.kernels.coca_transform import _coca_transform_rows

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    kernel = triton.jit(_coca_transform_rows)

    def kind(name: str) -> str:
        if name == "pos_ptr":
            return "*i64"
        if name in ("cos_ptr", "sin_ptr") and vllm_layout:
            return "*fp32"  # vLLM's cos/sin cache may stay fp32 under a bf16 model
        return f"*{dtype}" if name.endswith("_ptr") else "constexpr" if name.isupper() else "i32"

    constants = dict(
        Q_HEADS=32, KV_HEADS=8, HEAD_DIM=128, ROTARY_DIM=64, Q_BLOCK=32, KV_BLOCK=8, DIM_BLOCK=128,
        STRICT=not vllm_layout, HALF_TABLE=vllm_layout, HAS_POSITIONS=vllm_layout,
    )  # fmt: skip
    source = ASTSource(kernel, {name: kind(name) for name in kernel.arg_names}, constexprs=constants)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32))
    assert ".entry _coca_transform_rows" in compiled.asm["ptx"] and compiled.asm["cubin"]
