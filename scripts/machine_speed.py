"""One line on the machine a run is timed on: its cores, CPU and vector class, and torch's fp32 matmul
rate. Stage times of CI runs on different machines (or one machine at a busy hour) are read against it."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import torch


def cpu_name() -> str:
    """The CPU's model name and vector class (AVX-512 or AVX2), from /proc/cpuinfo where there is one."""
    info = Path("/proc/cpuinfo")
    text = info.read_text() if info.exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if "model name" in line), None)
    vector = "AVX-512" if " avx512f" in text else "AVX2" if " avx2" in text else "no AVX2"
    return f"{name or platform.processor() or platform.machine()}, {vector}"


def matmul_gflops(size: int = 1024, seconds: float = 2.0) -> float:
    """The best fp32 GFLOP/s of ``size`` x ``size`` products over about ``seconds``."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best, stop = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        start = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * size**3 / (time.perf_counter() - start) / 1e9)
    return best


if __name__ == "__main__":
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"machine: {cores} cores, {cpu_name()}; torch {torch.__version__} with {torch.get_num_threads()} "
        f"threads: fp32 matmul {matmul_gflops():.0f} GFLOP/s"
    )
