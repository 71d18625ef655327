"""Optional GPU kernels, and which implementation of an operation a run uses.

The CoCA transform (pair means of t, ReLU, rope; q ∘ rope(q)) has two implementations: the torch ops
and one fused Triton kernel (:mod:`coca_eval.kernels.coca_transform`) that replaces five to eight
elementwise launches per layer by one. On an H200 the fused kernel took 0.77-0.98x the time of plain
attention per layer and 0.86x its memory, where the torch ops took 1.01-1.05x and 1.14x
(``reports/gpu/coca_bench_cuda.md``), so the default, ``auto``, runs it on CUDA tensors whenever Triton
is importable and keeps the torch ops everywhere else.

Selection: ``COCA_EVAL_COCA_KERNEL=auto|torch|triton`` in the environment, or :func:`use_coca_kernel`
around a block. ``torch`` always runs the torch ops. ``triton`` forces the kernel where it can run at
all: Triton importable and the tensors on CUDA, or any device under ``TRITON_INTERPRET=1`` (how the CPU
tests run it). Importing this package never imports Triton.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from coca_eval.errors import CocaEvalError

KERNEL_ENV = "COCA_EVAL_COCA_KERNEL"
KERNELS = ("auto", "torch", "triton")
_override: list[str] = []


def selected_coca_kernel() -> str:
    """The implementation asked for: the innermost :func:`use_coca_kernel`, else the environment."""
    name = _override[-1] if _override else os.environ.get(KERNEL_ENV, "auto").strip().lower() or "auto"
    if name not in KERNELS:
        raise CocaEvalError(f"{KERNEL_ENV} must be one of {', '.join(KERNELS)}, got {name!r}")
    return name


@contextmanager
def use_coca_kernel(name: str) -> Iterator[None]:
    """Within the block CoCA layers use ``name`` (``auto``, ``torch`` or ``triton``) for their transform."""
    if name not in KERNELS:
        raise CocaEvalError(f"CoCA kernel must be one of {', '.join(KERNELS)}, got {name!r}")
    _override.append(name)
    try:
        yield
    finally:
        _override.pop()


def triton_available() -> bool:
    return importlib.util.find_spec("triton") is not None


def interpreting() -> bool:
    """Triton's CPU interpreter is on (kernels then run on CPU tensors, for tests)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def fused_transform_applies(tensor: torch.Tensor) -> bool:
    """Whether the fused kernel is selected and can run on ``tensor``'s device (``auto``: CUDA only)."""
    kernel = selected_coca_kernel()
    if kernel == "torch" or not triton_available():
        return False
    return tensor.is_cuda or (kernel == "triton" and interpreting())
