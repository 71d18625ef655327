"""One process with N threads vs torchrun with N ranks of one thread, on the same ppl and passkey runs,
side by side in one invocation (and, with ``--gpu`` on a CUDA machine, one GPU vs all visible GPUs).

* (a) ``coca-eval TASK ...`` in one process, ``OMP_NUM_THREADS=N`` (N = ``--cpus``, default 2);
* (b) ``torchrun --standalone --nproc-per-node N -m coca_eval TASK ...``, ``OMP_NUM_THREADS=1`` per rank;
* (c) with ``--gpu``: ``--device cuda`` in one process vs torchrun with one rank per visible GPU.

Each run is a whole fresh process tree with its own output and journals in a temporary directory (a
journal left over would let a run skip its work), timed by wall clock, start-up and model load
included: that is what a user waits for. Repeats rotate the order of the configurations so machine
drift hits them alike. The cells of every run must equal those of the first run of its reference
((a) for the CPU rows, one GPU for the GPU rows): scaling that changes a number is a bug, not a speed-up.

    nice python benchmarks/scale_bench.py [--model zoo-rope] [--repeats 3] [--gpu] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
from rich.console import Console

from coca_eval.results import load_run
from coca_eval.tables import rich_table

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("ppl", "passkey")
# meant for ~30-90 s per configuration on an idle 2-core CPU with zoo-rope. zoo:heldout holds two books:
# one document per rank of (b), but ranks past the second idle in ppl (give --dataset more documents for
# more GPUs); the 16 passkey samples split evenly over 2, 4 or 8 ranks.
SIZES = {"--dataset": "zoo:heldout", "--num-docs": 2, "--doc-tokens": 16384, "--ppl-lengths": "512..4k",
         "--stride": 512, "--passkey-lengths": "512..4k", "--samples": 16}  # fmt: skip


@dataclass(frozen=True)
class Config:
    """How one configuration launches (under torchrun with ``ranks`` ranks, or as one process), and the
    configuration whose cells and time it is measured against (``reference``, itself for a reference)."""

    name: str
    torchrun: bool
    ranks: int
    threads: int
    device: str
    reference: str


def configurations(args) -> list[Config]:
    """(a) and (b) always; (c) only where CUDA is there, so the same command runs on any machine."""
    cpu = f"(a) 1 process x {args.cpus} threads"
    configs = [Config(cpu, False, 1, args.cpus, "cpu", cpu)]
    configs.append(Config(f"(b) torchrun {args.cpus} ranks x 1 thread", True, args.cpus, 1, "cpu", cpu))
    if args.gpu and not torch.cuda.is_available():
        print("--gpu: no CUDA device visible, skipping (c)", flush=True)
    elif args.gpu:
        gpus, one = torch.cuda.device_count(), "(c) 1 GPU"
        configs.append(Config(one, False, 1, args.cpus, "cuda", one))
        configs.append(Config(f"(c) torchrun {gpus} GPUs", True, gpus, 1, "cuda", one))
    return configs


def task_options(task: str, args) -> list[str]:
    """The sizes this script sets; the rest is the task's default preset, alike in every configuration."""
    if task == "ppl":
        sizes = ("--num-docs", args.num_docs, "--doc-tokens", args.doc_tokens, "--stride", args.stride)
        return ["--dataset", args.dataset, "--lengths", args.ppl_lengths, *map(str, sizes)]
    return ["--lengths", args.passkey_lengths, "--samples", str(args.samples)]


def command(config: Config, task: str, args, output: Path) -> list[str]:
    """The same interpreter (so the same venv) for coca-eval and for torchrun."""
    launch = [sys.executable, "-m", "coca_eval"]
    if config.torchrun:
        launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                  str(config.ranks), "-m", "coca_eval"]  # fmt: skip
    return [*launch, task, "--model", args.model, "--device", config.device, *task_options(task, args),
            "--output", str(output)]  # fmt: skip


def timed_run(config: Config, task: str, args, output: Path) -> tuple[float, float, list[dict]]:
    """Wall seconds, the 1-minute load average just before, and the cells written. The child's thread
    count is set here whatever the parent's environment says (torchrun passes it on to every rank)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "OMP_NUM_THREADS": str(config.threads), "PYTHONPATH": path}
    load = os.getloadavg()[0]
    start = time.perf_counter()
    result = subprocess.run(command(config, task, args, output), capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{config.name} {task} failed (rc {result.returncode}):\n{result.stderr[-3000:]}")
    return seconds, load, [cell.model_dump() for cell in load_run(output).cells]


def flat(cell: dict) -> dict:
    """A cell's fields and its detail's on one level, so a difference can be named."""
    return {**cell, "detail": None, **{f"detail.{k}": v for k, v in cell["detail"].items()}}


def agreement(reference: list[dict], cells: list[dict]) -> str:
    """Whole cells first; else whether the values still agree and which fields differ (a flag of how a
    process worked, such as passkey's ``detail.prefix_reuse`` with one sample per rank, may)."""
    if cells == reference:
        return "identical"
    if len(cells) != len(reference):
        return f"VALUES DIFFER: {len(cells)} cells, not {len(reference)}"
    pairs = [(flat(a), flat(b)) for a, b in zip(reference, cells, strict=True)]
    fields = sorted({k for a, b in pairs for k in a.keys() | b.keys() if a.get(k) != b.get(k)})
    same = "VALUES DIFFER" if {"method", "length", "status", "value"} & set(fields) else "values equal"
    return f"{same}; differ: {', '.join(fields)}"


def measure(configs: list[Config], args, work: Path) -> pd.DataFrame:
    """Every (task, configuration) ``--repeats`` times, the configurations rotated per repeat."""
    runs: dict[tuple[str, str], list[tuple[float, float, list[dict]]]] = {}
    for repeat in range(args.repeats):
        order = configs[repeat % len(configs) :] + configs[: repeat % len(configs)]
        for task in TASKS:
            for config in order:
                output = work / f"{task}-r{repeat}-c{configs.index(config)}" / "run.json"
                runs.setdefault((task, config.name), []).append(timed_run(config, task, args, output))
                print(f"{task} {config.name}: {runs[task, config.name][-1][0]:.1f} s", flush=True)
    return summary(configs, runs)


def summary(configs: list[Config], runs: dict) -> pd.DataFrame:
    """One row per (task, configuration): times, ratios, and whether its cells equal its reference's."""
    rows = []
    for task in TASKS:
        median = {c.name: statistics.median(s for s, _, _ in runs[task, c.name]) for c in configs}
        for config in configs:
            seconds, loads, _ = zip(*runs[task, config.name], strict=True)
            first = runs[task, config.reference][0][2]
            checks = sorted({agreement(first, cells) for _, _, cells in runs[task, config.name]})
            ratio = f"{median[config.name] / median[configs[0].name]:.3f}x"
            if config.reference != configs[0].name:
                ratio += f" ({median[config.name] / median[config.reference]:.3f}x of {config.reference})"
            rows.append({
                "task": task, "configuration": config.name, "median s": f"{median[config.name]:.1f}",
                "min / max s": f"{min(seconds):.1f} / {max(seconds):.1f}", "ratio to (a)": ratio,
                "cells": f"{', '.join(checks)} vs {config.reference.split(')')[0]})",
                "load before each run (1 min)": ", ".join(f"{x:.2f}" for x in loads),
            })  # fmt: skip
    return pd.DataFrame(rows)


def verdict(frame: pd.DataFrame) -> str:
    """The equality check in words: ranks or GPUs that change a number are a bug, whatever the speed."""
    bad = [f"{r.task} {r.configuration}" for r in frame.itertuples() if "DIFFER" in r.cells]
    if bad:
        return "Cells: VALUES DIFFER from the reference's in " + "; ".join(bad) + "."
    return (
        "Cells: every run's values equal its reference's (column `cells` names any other field that differs)."
    )


def machine_line(configs: list[Config]) -> str:
    """What the numbers depend on besides the code: cores, torch, GPUs."""
    parts = [f"{platform.machine()}, {os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable)",
             f"Python {sys.version.split()[0]}", f"torch {torch.__version__}"]  # fmt: skip
    if any(c.device == "cuda" for c in configs):
        parts.append("GPUs: " + ", ".join(map(torch.cuda.get_device_name, range(torch.cuda.device_count()))))
    return ", ".join(parts) + "; load average (1 / 5 / 15 min) at start: {:.2f} / {:.2f} / {:.2f}".format(
        *os.getloadavg()
    )


def render(frame: pd.DataFrame, configs: list[Config], args, machine: str) -> str:
    example = {task: " ".join(command(configs[1], task, args, Path("OUT.json"))[1:]) for task in TASKS}
    return "\n".join([
        "# scale_bench: one process with threads vs torchrun ranks, same ppl and passkey runs", "",
        f"{machine}.", "",
        f"Model `{args.model}`, whole processes, fresh outputs and journals per run, median of "
        f"{args.repeats} (configurations rotated per repeat). Commands, as (b) runs them:", "",
        *(f"- `python {line}`" for line in example.values()), "",
        frame.to_markdown(index=False, disable_numparse=True), "", verdict(frame), "",
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="zoo-rope")
    parser.add_argument("--cpus", type=int, default=2, help="threads of (a), ranks of (b)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpu", action="store_true", help="also (c), where CUDA is there")
    for flag, default in SIZES.items():
        parser.add_argument(flag, type=type(default), default=default, help="default: %(default)s")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    configs = configurations(args)
    machine = machine_line(configs)
    with tempfile.TemporaryDirectory(prefix="scale_bench-") as tmp:
        frame = measure(configs, args, Path(tmp))
    Console().print(rich_table(frame.set_index("task"), title="scale_bench"))
    print(f"{machine}\n{verdict(frame)}")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(render(frame, configs, args, machine), encoding="utf-8")
    if "DIFFER" in verdict(frame):
        raise SystemExit(1)  # after the report is written: a wrong number is worth a look at the table


if __name__ == "__main__":
    main()
