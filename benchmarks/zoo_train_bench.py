"""Zoo training speed: eager float32 against torch.compile and bf16 autocast, side by side in one run.

The zoo recipe trains in eager float32. This measures whether either of the usual speed-ups pays on
the machine at hand, with the zoo's own model, batch and optimiser step: each variant trains the same
fresh model on the same batches for ``--steps`` timed steps after ``--warmup`` untimed ones (compile
happens in the warm-up), interleaved over ``--rounds`` rounds so that load drifts hit every variant
alike. Prints tokens/s and the ratio to eager.

    nice python benchmarks/zoo_train_bench.py [--steps 20] [--rounds 2] \
        [--report reports/benchmarks/zoo_train_bench.md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coca_eval.zoo.build import build_model  # noqa: E402
from coca_eval.zoo.catalog import zoo_spec  # noqa: E402
from coca_eval.zoo.hardware import cpu_name, native_bf16  # noqa: E402
from coca_eval.zoo.train import make_optimizer, train_step  # noqa: E402

VARIANTS = ("eager fp32", "torch.compile fp32", "eager bf16 autocast")


def make_variant(name: str, spec):
    """A fresh model, its optimiser, the forward to call (compiled or not) and whether to autocast."""
    torch.manual_seed(0)
    model = build_model(spec, eos_id=0, pad_id=0)
    model.train()
    optimizer = make_optimizer(model, spec.recipe)
    forward = torch.compile(model) if "compile" in name else model
    return model, optimizer, forward, "bf16" in name


def step(model, optimizer, forward, bf16: bool, rows) -> None:
    """The recipe's own training step on ``forward`` (the model, or its compiled form over the same
    parameters), so the benchmark times exactly what ``coca-eval zoo train`` runs."""
    train_step(forward, optimizer, rows, optimizer.param_groups[0]["lr"], 1.0, bf16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    spec = zoo_spec("zoo-rope")
    b, n, vocab = spec.recipe.batch_size, spec.recipe.context, spec.architecture.vocab_size
    batches = [
        torch.randint(0, vocab, (b, n + 1), generator=torch.Generator().manual_seed(i)) for i in range(8)
    ]
    variants = {name: make_variant(name, spec) for name in VARIANTS}
    for parts in variants.values():
        for i in range(args.warmup):
            step(*parts, batches[i % len(batches)])
    speeds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.rounds):
        for name, parts in variants.items():
            began = time.perf_counter()
            for i in range(args.steps):
                step(*parts, batches[i % len(batches)])
            speeds[name].append(args.steps * b * n / (time.perf_counter() - began))
    lines = report_lines(speeds, spec, args)
    print("\n".join(lines))
    if args.report:
        args.report.write_text("\n".join(lines) + "\n", encoding="utf-8")


def report_lines(speeds, spec, args) -> list[str]:
    eager = statistics.median(speeds[VARIANTS[0]])
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = [
        f"| {name} | {statistics.median(v):,.0f} | {statistics.median(v) / eager:.2f}x |"
        for name, v in speeds.items()
    ]
    return [
        "# zoo_train_bench: one zoo training step, eager fp32 vs torch.compile vs bf16 autocast",
        "",
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs "
        f"({cpu_name()}, torch CPU capability {torch.backends.cpu.get_cpu_capability()}, "
        f"native bf16: {'yes' if native_bf16(torch.device('cpu')) else 'no'}), "
        f"load {load} at the end; zoo-rope architecture, batch {spec.recipe.batch_size} x "
        f"{spec.recipe.context}, AdamW step included; "
        f"{args.steps} timed steps x {args.rounds} interleaved rounds after {args.warmup} warm-up steps.",
        "",
        "| variant | tokens/s (median of rounds) | vs eager fp32 |",
        "|:--|--:|--:|",
        *rows,
    ]


if __name__ == "__main__":
    main()
