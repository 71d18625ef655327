"""The training machine: which device a run asks for, whether bf16 autocast pays there, and its name.

bf16 autocast is a speed-up only where the hardware computes in bf16: on a CPU with AVX-512 (oneDNN's
bf16 kernels) it trained a zoo step 1.38x faster than fp32, while on an AVX2-only CPU, where every
bf16 matmul is emulated, the same step was about 8x slower (``reports/benchmarks/``). The recipe's
``bf16_autocast`` therefore means "where the hardware supports it", and the record of a run says
what was actually used.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import torch

from coca_eval.errors import CocaEvalError


def native_bf16(device: torch.device) -> bool:
    """Whether bf16 matmuls run natively on ``device`` (a CUDA GPU with bf16, or a CPU whose oneDNN
    has bf16 kernels); False where they would be emulated."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a torch built without oneDNN
        return False


def use_bf16_autocast(wanted: bool, device: torch.device) -> bool:
    """The recipe's wish, kept only where it is a speed-up (the weights differ from fp32's by
    rounding either way; the batches are the same)."""
    return wanted and native_bf16(device)


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo, else the platform's guess."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_description(device: torch.device) -> str:
    """Where the steps ran, for reading a run's tokens/s: the GPU, or the CPU, its torch capability
    (AVX2, AVX512, ...) and its threads."""
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} (cuda)"
    capability = torch.backends.cpu.get_cpu_capability()
    return f"{cpu_name()} ({platform.machine()}, {capability}), {torch.get_num_threads()} threads"


def model_device(model) -> torch.device:
    return next(model.parameters()).device


def resolve_device(name: str) -> torch.device:
    """``cpu``, ``cuda`` or ``cuda:N``; a GPU that is not there is one line, not a CUDA traceback."""
    try:
        device = torch.device(name)
    except RuntimeError:
        raise CocaEvalError(f"unknown device {name!r} (use cpu, cuda or cuda:N)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CocaEvalError(f"--device {name}: no CUDA GPU is visible to torch here")
    if device.type not in ("cpu", "cuda"):
        raise CocaEvalError(f"--device {name}: zoo training runs on cpu or cuda")
    return device


def device_memory(device: torch.device) -> tuple[int | None, str]:
    """How many bytes a model trained on ``device`` can use at most, and what to call that memory: a
    GPU's own memory, or the machine's physical memory for the CPU. Allocates nothing."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory, torch.cuda.get_device_name(device)
    return system_memory_bytes(), "this machine's RAM"


def system_memory_bytes() -> int | None:
    """This machine's physical memory (not what is free now: a run refused because another process
    holds memory for the moment would fit once it ends). None where the platform does not say."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
