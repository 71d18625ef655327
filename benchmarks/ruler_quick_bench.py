"""Where ``coca-eval ruler`` (the ``ruler-quick`` preset) spends its time, at ``--batch-size 1`` and
``auto``, side by side in one run, against the CPU's physical floor for its prefill.

Each run is the whole process as a user starts it (``python -m coca_eval ruler``, the model already
converted in the cache), with the hf backend's forwards timed from inside: prefill forwards (more than
one new token) and decoding steps (one new token per row), their counts and tokens. The floor: the
prefill's floating-point work (2 x non-embedding parameters per token, plus causal attention's
2 x 2 x layers x hidden x (position + 1) per token) divided by the fp32 matrix-multiply rate measured
on this machine at the model's own layer shapes (the best of its projections, over 2,048 rows); no
implementation of the same arithmetic in fp32 can prefill faster. Runs alternate (auto, 1, auto, 1, ...)
so drift hits both. The CPU's class (AVX2 / AVX-512) and the load are printed with the times.

    nice python benchmarks/ruler_quick_bench.py [--rounds 1] [--batches auto,1] \\
        [--report reports/benchmarks/ruler_quick_bench.md] [-- RULER OPTIONS]

Options after ``--`` replace the preset's job, e.g. ``-- --tasks niah_single_1 --lengths 1024 --samples
20 --chat-template none`` (the job the batching goal is measured on, in the report
``reports/benchmarks/batching_1k.md``).

On an AVX-512 machine, ``ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
ONEDNN_MAX_CPU_ISA=AVX2`` runs the AVX2 code paths of torch, MKL and oneDNN (the report says so); it
is the code an AVX2 CPU runs, not that CPU's clock, caches or memory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import atexit, collections, json, sys, time
from coca_eval.backends import hf_generation
stats = collections.defaultdict(lambda: {"forwards": 0, "seconds": 0.0, "tokens": 0, "positions": 0})
original = hf_generation.GreedyDecoder._forward
def timed(self, rows, cache=None, padding=None):
    start = time.perf_counter()
    out = original(self, rows, cache, padding)
    kind = "decode" if len(rows[0]) == 1 else "prefill"
    entry = stats[kind]
    entry["forwards"] += 1
    entry["seconds"] += time.perf_counter() - start
    entry["tokens"] += len(rows) * len(rows[0])
    past = 0 if cache is None else cache.get_seq_length() - len(rows[0])
    n = len(rows[0])
    entry["positions"] += len(rows) * (n * past + n * (n + 1) // 2)  # key positions attended, summed
    return out
hf_generation.GreedyDecoder._forward = timed
atexit.register(lambda: print("FORWARDS " + json.dumps(stats), file=sys.stderr))
from coca_eval.cli import main
main(sys.argv[1:])
"""


ISA_LIMITS = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")
"""Variables that hold torch's own kernels, MKL's and oneDNN's to an older vector class: an AVX-512
machine then runs the code an AVX2 one runs (not at an AVX2 machine's clock or caches)."""


def cpu_class() -> str:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    names = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    vector = "AVX-512" if "avx512f" in text else "AVX2" if "avx2" in text else "no AVX2"
    limits = [f"{name}={os.environ[name]}" for name in ISA_LIMITS if os.environ.get(name)]
    limited = f", kernels limited by {' '.join(limits)}" if limits else ""
    return f"{names[0] if names else 'CPU'} ({vector}{limited}), {os.cpu_count()} cores"


def run_once(batch: str, work: Path, extra: list[str]) -> dict:
    out = Path(tempfile.mkdtemp(dir=work)) / f"ruler-b{batch}.json"  # a fresh folder: no journal to resume
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "ruler", *extra, "--batch-size", batch, "--output", str(out)],
        cwd=work, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"ruler --batch-size {batch} failed: {done.stderr[-2000:]}")
    forwards = json.loads(done.stderr.split("FORWARDS ", 1)[1].splitlines()[0])
    cells = json.loads(out.read_text())["cells"]
    outputs = [s["output"] for c in cells for s in c["detail"]["samples"]]
    return {"batch": batch, "wall_s": wall, "load": [load, os.getloadavg()[0]], "forwards": forwards,
            "outputs": outputs}  # fmt: skip


def model_shapes() -> dict:
    from transformers import AutoConfig

    from coca_eval.models.presets import resolve_model

    config = AutoConfig.from_pretrained(resolve_model("smollm2-135m")[0]).get_text_config()
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    kv = hidden * config.num_key_value_heads // config.num_attention_heads
    per_layer = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * inner  # q, o, k, v, gate/up/down
    return {"hidden": hidden, "inner": inner, "kv": kv, "layers": layers, "params": per_layer * layers}


def matmul_rate(shapes: dict) -> float:
    """The best fp32 GFLOP/s of the model's projections over 2,048 rows (torch, this process's threads)."""
    import torch

    hidden, inner, kv = shapes["hidden"], shapes["inner"], shapes["kv"]
    best = 0.0
    for out_features, in_features in ((hidden, hidden), (kv, hidden), (inner, hidden), (hidden, inner)):
        x, w = torch.randn(2048, in_features), torch.randn(out_features, in_features)
        for _ in range(3):
            torch.nn.functional.linear(x, w)
        start, repeats = time.perf_counter(), 20
        for _ in range(repeats):
            torch.nn.functional.linear(x, w)
        seconds = (time.perf_counter() - start) / repeats
        best = max(best, 2 * 2048 * in_features * out_features / seconds / 1e9)
    return best


def prefill_floor(forwards: dict, shapes: dict, rate: float) -> tuple[float, float]:
    """The prefill's GFLOP and the seconds they take at ``rate``."""
    prefill = forwards["prefill"]
    flops = (
        2 * shapes["params"] * prefill["tokens"]
        + 4 * shapes["layers"] * shapes["hidden"] * prefill["positions"]
    )
    return flops / 1e9, flops / 1e9 / rate


def report(runs: list[dict], shapes: dict, rate: float, args) -> str:
    job = " ".join(args.ruler_args)
    passed = f" -- {job}" if job else ""
    lines = [
        f"# {'coca-eval ruler ' + job if job else 'ruler-quick'}: where the time goes, at --batch-size "
        f"{' and '.join(args.batches.split(','))}",
        "",
        f"Machine: {cpu_class()}. Command: `python benchmarks/ruler_quick_bench.py --rounds {args.rounds}"
        f" --batches {args.batches}{passed}`"
        f" (each run: `coca-eval ruler {job + ' ' if job else ''}--batch-size B`, "
        f"{'the ruler-quick preset, ' if not job else ''}model already converted).",
        f"Measured fp32 matmul rate at SmolLM2-135M's projection shapes: {rate:.0f} GFLOP/s.",
        "",
        "| batch | wall s | prefill s (forwards, tokens) | prefill floor s (GFLOP) "
        "| decode s (steps, tokens) | decode ms/step | other s | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        f = run["forwards"]
        gflop, floor = prefill_floor(f, shapes, rate)
        pre, dec = f["prefill"], f.get("decode", {"seconds": 0.0, "forwards": 0, "tokens": 0})
        other = run["wall_s"] - pre["seconds"] - dec["seconds"]
        lines.append(
            f"| {run['batch']} | {run['wall_s']:.0f} | "
            f"{pre['seconds']:.0f} ({pre['forwards']}, {pre['tokens']}) | {floor:.0f} ({gflop:.0f}) | "
            f"{dec['seconds']:.0f} ({dec['forwards']}, {dec['tokens']}) | "
            f"{1e3 * dec['seconds'] / max(1, dec['forwards']):.0f} | {other:.0f} | "
            f"{min(run['load']):.1f}-{max(run['load']):.1f} |"
        )
    same = all(r["outputs"] == runs[0]["outputs"] for r in runs)
    lines += [
        "",
        f"Every run gave the same {len(runs[0]['outputs'])} answers: {'yes' if same else 'NO'}.",
        "",
        *speedup_lines(runs, len(args.batches.split(","))),
    ]
    return "\n".join(lines)


def speedup_lines(runs: list[dict], per_round: int) -> list[str]:
    """Per round, each batch against batch 1, and the speed-up it would reach if each of its decoding
    steps cost what a one-row step costs (the floor of a memory-bound step: reading the weights once)."""
    lines = []
    for start in range(0, len(runs), per_round):
        round_runs = runs[start : start + per_round]
        single = next((r for r in round_runs if r["batch"] == "1"), None)
        if single is None or "decode" not in single["forwards"]:
            continue
        step = single["forwards"]["decode"]["seconds"] / single["forwards"]["decode"]["forwards"]
        for run in (r for r in round_runs if r is not single and "decode" in r["forwards"]):
            decode = run["forwards"]["decode"]
            floor = run["wall_s"] - decode["seconds"] + decode["forwards"] * step
            speedup = single["wall_s"] / run["wall_s"]
            lines.append(
                f"- round {start // per_round + 1}, batch {run['batch']}: {speedup:.2f}x batch 1; with every "
                f"step at a one-row step's {1e3 * step:.0f} ms it would take {floor:.0f} s: "
                f"{single['wall_s'] / floor:.2f}x."
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--batches", default="auto,1", help="the --batch-size of each run, in order")
    parser.add_argument("--report", type=Path)
    parser.add_argument(
        "ruler_args", nargs="*", help="after --: options of coca-eval ruler (default: the ruler-quick preset)"
    )
    args = parser.parse_args()
    shapes = model_shapes()
    rate = matmul_rate(shapes)
    work = Path(tempfile.mkdtemp(prefix="ruler-quick-bench-"))
    runs = []
    for _ in range(args.rounds):
        for batch in args.batches.split(","):
            run = run_once(batch, work, args.ruler_args)
            print(json.dumps({k: v for k, v in run.items() if k != "outputs"}), flush=True)
            runs.append(run)
    text = report(runs, shapes, rate, args)
    print(text)
    if args.report:
        args.report.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
