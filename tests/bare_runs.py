"""A bare ``coca-eval TASK`` (the task's default preset, offline), run once per test session.

The README and the docs quote what these runs print (tests/docs/test_promises.py), and the batching
checks compare them, made at the default ``--batch-size auto``, with a run at batch 1
(tests/backends/test_hf_batching.py): each is minutes of CPU, so the tests share one run of each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class BareRun:
    """What a run printed and the results file it wrote."""

    stdout: str
    run: dict

    def ok_cells(self) -> list[dict]:
        return [c for c in self.run["cells"] if c["status"] == "ok"]


def checkout_env() -> dict[str, str]:
    """This checkout first on PYTHONPATH (then the session's plug-in declarations), offline, wide tables."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}


def run_cli(args: list[str], work: Path, output: str, timeout: int = 1800) -> BareRun:
    """``coca-eval ARGS --output OUTPUT`` in ``work``; a failure shows the end of its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "coca_eval", *args, "--output", output],
        cwd=work, env=checkout_env(), capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return BareRun(done.stdout, json.loads((work / output).read_text()))


class BareRuns:
    """Each task's bare run, made the first time a test asks for it."""

    def __init__(self, make_dir) -> None:
        self._make_dir = make_dir
        self._done: dict[str, BareRun] = {}

    def __call__(self, task: str) -> BareRun:
        if task not in self._done:
            self._done[task] = run_cli([task], self._make_dir(f"bare-{task}"), f"{task}.json")
        return self._done[task]


def sample_answers(run: dict, tasks: set[str] | None = None, lengths: set[int] | None = None) -> list[tuple]:
    """Every sample's output, keyed by method, dataset, length and index, in the run's order."""
    return [
        (c["method"], c["dataset"], c["length"], s["index"], s["output"])
        for c in run["cells"]
        if (tasks is None or c["dataset"] in tasks) and (lengths is None or c["length"] in lengths)
        for s in c["detail"]["samples"]
    ]
