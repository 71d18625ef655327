"""Which CoCA transform runs: the fused kernel on CUDA by default, the torch ops elsewhere or when asked."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from coca_eval.errors import CocaEvalError
from coca_eval.kernels import KERNEL_ENV, fused_transform_applies, selected_coca_kernel, use_coca_kernel


def test_auto_is_the_default_and_keeps_the_torch_ops_off_cuda(monkeypatch):
    monkeypatch.delenv(KERNEL_ENV, raising=False)
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the interpreter serves an explicit `triton` alone
    assert selected_coca_kernel() == "auto"
    assert not fused_transform_applies(torch.zeros(1))


def test_auto_takes_the_kernel_on_cuda_tensors_when_triton_imports(monkeypatch):
    import coca_eval.kernels as kernels

    cuda_tensor = SimpleNamespace(is_cuda=True)
    monkeypatch.delenv(KERNEL_ENV, raising=False)
    monkeypatch.setattr(kernels, "triton_available", lambda: True)
    assert fused_transform_applies(cuda_tensor)
    with use_coca_kernel("torch"):
        assert not fused_transform_applies(cuda_tensor)
    monkeypatch.setattr(kernels, "triton_available", lambda: False)
    assert not fused_transform_applies(cuda_tensor)


def test_environment_and_context_select(monkeypatch):
    monkeypatch.setenv(KERNEL_ENV, "Triton")
    assert selected_coca_kernel() == "triton"
    with use_coca_kernel("torch"):
        assert selected_coca_kernel() == "torch"
    assert selected_coca_kernel() == "triton"


def test_bad_names_are_one_line_errors(monkeypatch):
    monkeypatch.setenv(KERNEL_ENV, "cuda")
    with pytest.raises(CocaEvalError, match="COCA_EVAL_COCA_KERNEL must be one of auto, torch, triton"):
        selected_coca_kernel()
    with pytest.raises(CocaEvalError, match="one of auto, torch, triton"), use_coca_kernel("fast"):
        pass


def test_cpu_tensors_without_the_interpreter_keep_the_torch_ops(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with use_coca_kernel("triton"):
        assert not fused_transform_applies(torch.zeros(1))  # CPU tensor: Triton cannot compile for it
        monkeypatch.setenv("TRITON_INTERPRET", "1")
        assert fused_transform_applies(torch.zeros(1))


def test_importing_the_package_does_not_load_the_kernel_module():
    code = (
        "import sys, coca_eval, coca_eval.kernels; print('coca_eval.kernels.coca_transform' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
