"""The CLI's two consoles, made on first use (rich's import is the CLI's largest startup cost), and
what an evaluating command prints and writes when it finishes: its table and where the run went."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import Any


@functools.cache
def stdout():
    from rich.console import Console

    return Console()


@functools.cache
def stderr():
    from rich.console import Console

    return Console(stderr=True)


def error_line(message: str) -> None:
    """One line on stderr that is printed even where the console was silenced (a torchrun rank other
    than 0 prints no progress or tables, but its errors still count)."""
    console = stderr()
    console.quiet = False
    console.print(message, markup=False, highlight=False, soft_wrap=True)


def default_output(task: str, now: datetime | None = None) -> Path:
    """Where a run without ``--output`` is written (``runs/<task>-<timestamp>.json``), so there is
    always a file to hand to ``report`` or ``gate``."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{task}-{stamp}.json"


def save_default(run: Any, output: Path | None, task: str) -> Path:
    """The ``--output`` path (already written by the task), else the run written to the default path."""
    if output is not None:
        return Path(output)
    from coca_eval.taskspec import save_run_in_points

    path = default_output(task)
    save_run_in_points(run, path)
    return path


def print_length_table(run: Any, heading: str, digits: int, written: Path, note: str | None = None) -> None:
    """The heading, the methods x lengths table and the ``note`` qualifying it (right under it, before
    where the results went)."""
    from coca_eval.tables import methods_by_lengths, rich_table

    if any(cell.status == "partial" for cell in run.cells):
        stderr().print(shard_summary(run, written), markup=False, highlight=False, soft_wrap=True)
        return
    stdout().print(heading)
    stdout().print(rich_table(methods_by_lengths(run.cells, digits), title=""))
    if note:
        stdout().print(note, markup=False, highlight=False, soft_wrap=True)
    stderr().print(f"results written to {written}", markup=False, highlight=False, soft_wrap=True)


def shard_summary(run: Any, written: Path) -> str:
    """What a ``--shard`` run did instead of a table (it has no numbers yet) and what comes next."""
    partial = [cell for cell in run.cells if cell.status == "partial"]
    mine = sum(len(cell.detail["parts"]) for cell in partial)
    units = sum(cell.detail["units"] for cell in partial)
    shard = partial[0].detail["shard"]
    return (
        f"shard {shard}: {mine} of {units} units of {len(partial)} cell{'s' * (len(partial) != 1)} "
        f"written to {written}; "
        f"`coca-eval merge` all {shard.split('/')[1]} shard files into one run for tables and the gate"
    )
