"""Timing and peak memory of GPU calls, shared by the CUDA benchmarks.

Times are CUDA-event intervals of whole calls (the host waits for the stream at the end of each), the
median over interleaved rounds whose order rotates, so clock or thermal drift hits every method alike.
Peak memory is ``torch.cuda.max_memory_allocated`` during one further call, above what was allocated
before it (the inputs and weights are therefore not counted; the call's output is).

``COCA_BENCH_DRY_RUN=1`` runs a benchmark's logic on CPU (wall-clock times, peaks reported as 0) with
small shapes, to check a benchmark before spending GPU time on it; its numbers mean nothing.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

GIB = 2**30
DRY_RUN = os.environ.get("COCA_BENCH_DRY_RUN") == "1"
DEVICE = "cpu" if DRY_RUN else "cuda"


def require_cuda(program: str) -> None:
    """One line and exit code 2 where there is no GPU."""
    if not torch.cuda.is_available() and not DRY_RUN:
        print(
            f"{program}: needs a CUDA GPU (torch.cuda.is_available() is False); nothing was run",
            file=sys.stderr,
        )
        sys.exit(2)


def device_line() -> str:
    if DRY_RUN:
        return "DRY RUN on CPU (numbers meaningless)"
    props = torch.cuda.get_device_properties(0)
    return (
        f"{torch.cuda.get_device_name(0)} ({props.total_memory / GIB:.0f} GiB, {props.multi_processor_count} "
        f"SMs), torch {torch.__version__}, CUDA {torch.version.cuda}"
    )


def cuda_ms(fn: Callable[[], object]) -> float:
    if DRY_RUN:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop)


def cuda_peak(fn: Callable[[], object]) -> int:
    if DRY_RUN:
        fn()
        return 0
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def attempt(fn: Callable[[], object]) -> str | None:
    """Run once; the out-of-memory message if the GPU could not hold it (caught, memory released)."""
    try:
        fn()
        if not DRY_RUN:
            torch.cuda.synchronize()
        return None
    except torch.OutOfMemoryError as exc:
        torch.cuda.empty_cache()
        return "OOM: " + " ".join(str(exc).split())[:120]


def interleaved(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, dict]:
    """Per method: median ms over ``rounds`` rotating rounds and the peak of one more call, or the
    out-of-memory status of a method that does not fit (its first call, a warm-up, is caught)."""
    failed = {name: attempt(fn) for name, fn in runs.items()}  # warm-up (and autotuning) of each
    alive = [name for name in runs if failed[name] is None]
    samples: dict[str, list[float]] = {name: [] for name in alive}
    for r in range(rounds):
        for name in alive[r % len(alive) :] + alive[: r % len(alive)] if alive else []:
            samples[name].append(cuda_ms(runs[name]))
    result = {name: {"status": failed[name]} for name in runs if failed[name]}
    for name in alive:
        result[name] = {"ms": statistics.median(samples[name]), "peak": cuda_peak(runs[name]), "status": "ok"}
    return result


def ratio(result: dict, name: str, base: str, field: str) -> float | None:
    a, b = result.get(name, {}), result.get(base, {})
    both = a.get("status") == "ok" and b.get("status") == "ok"
    return a[field] / b[field] if both and b[field] else None
