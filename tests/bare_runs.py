"""A bare ``coca-eval TASK`` (the task's default preset, offline), run once per test session.

The README and the docs quote what these runs print (tests/docs/test_promises.py), and the batching
checks compare them, made at the default ``--batch-size auto``, with a run at batch 1
(tests/backends/test_hf_batching.py): each is minutes of CPU, so the tests share one run of each. When
the suite runs in several processes (pytest-xdist), they share it too: the first process to ask runs it
under a file lock in the run's common temporary folder and saves what it printed and wrote there; the
others wait on the lock and read that.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

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
    """``coca-eval ARGS --output OUTPUT`` in ``work`` (a process forked from one that imported torch
    and transformers, tests/forked_cli.py); a failure shows the end of its stderr."""
    from forked_cli import run_cli as forked_run

    done = forked_run(*args, "--output", output, cwd=work, env=checkout_env(), timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return BareRun(done.stdout, json.loads((work / output).read_text()))


class BareRuns:
    """Each task's bare run, made the first time a test asks for it; with ``shared`` (a folder every
    worker process of the session sees), made once for all of them."""

    def __init__(self, make_dir, shared: Path | None = None) -> None:
        self._make_dir, self._shared = make_dir, shared
        self._done: dict[str, BareRun] = {}

    def __call__(self, task: str) -> BareRun:
        if task not in self._done:
            self._done[task] = self._shared_run(task) if self._shared else self._run(task)
        return self._done[task]

    def _run(self, task: str) -> BareRun:
        return run_cli([task], self._make_dir(f"bare-{task}"), f"{task}.json")

    def _shared_run(self, task: str) -> BareRun:
        saved = self._shared / f"bare-{task}.json"
        with FileLock(self._shared / f"bare-{task}.lock"):
            if not saved.exists():
                done = self._run(task)
                saved.write_text(json.dumps({"stdout": done.stdout, "run": done.run}))
            return BareRun(**json.loads(saved.read_text()))


def sample_answers(run: dict, tasks: set[str] | None = None, lengths: set[int] | None = None) -> list[tuple]:
    """Every sample's output, keyed by method, dataset, length and index, in the run's order."""
    return [
        (c["method"], c["dataset"], c["length"], s["index"], s["output"])
        for c in run["cells"]
        if (tasks is None or c["dataset"] in tasks) and (lengths is None or c["length"] in lengths)
        for s in c["detail"]["samples"]
    ]
