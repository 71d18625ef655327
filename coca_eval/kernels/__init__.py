"""Optional GPU kernels, and which implementation of an operation a run uses.

The CoCA transform (pair means of t, ReLU, rope; q ∘ rope(q)) has two implementations: the torch ops
the models always had (the default) and one fused Triton kernel
(:mod:`coca_eval.kernels.coca_transform`). The fused kernel is opt-in: it replaces five to eight
elementwise launches per layer by one, which can only pay on a GPU, and whether it does is decided by a
GPU measurement (``benchmarks/coca_bench.py --device cuda`` times both); until that measurement says
so, the torch ops stay the default.

Selection: ``COCA_EVAL_COCA_KERNEL=torch|triton`` in the environment, or :func:`use_coca_kernel` around
a block. ``triton`` takes effect only where it can run: Triton importable and the tensors on CUDA (or
any device under ``TRITON_INTERPRET=1``, which is how the CPU tests run it); elsewhere the torch ops
run. Importing this package never imports Triton.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from coca_eval.errors import CocaEvalError

KERNEL_ENV = "COCA_EVAL_COCA_KERNEL"
KERNELS = ("torch", "triton")
_override: list[str] = []


def selected_coca_kernel() -> str:
    """The implementation asked for: the innermost :func:`use_coca_kernel`, else the environment."""
    name = _override[-1] if _override else os.environ.get(KERNEL_ENV, "torch").strip().lower() or "torch"
    if name not in KERNELS:
        raise CocaEvalError(f"{KERNEL_ENV} must be one of {', '.join(KERNELS)}, got {name!r}")
    return name


@contextmanager
def use_coca_kernel(name: str) -> Iterator[None]:
    """Within the block CoCA layers use ``name`` (``torch`` or ``triton``) for their transform."""
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
    """Whether the fused kernel is selected and can run on ``tensor``'s device."""
    if selected_coca_kernel() != "triton" or not triton_available():
        return False
    return tensor.is_cuda or interpreting()
