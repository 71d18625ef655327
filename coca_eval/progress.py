"""Rich progress with ETA for every long loop: one bar per cell (method x length) plus a run total."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

stderr = Console(stderr=True)


class CellProgress:
    """Tracks units of work (windows, samples) for the current cell and for the whole run."""

    def __init__(self, total_cells: int, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console or stderr,
            transient=False,
        )
        self._run = self._progress.add_task("all cells", total=total_cells)
        self._cell: int | None = None

    def __enter__(self) -> CellProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)

    def start_cell(self, description: str, total: int, done: int = 0) -> None:
        self._cell = self._progress.add_task(description, total=total, completed=done)

    def advance(self, units: int = 1) -> None:
        if self._cell is not None:
            self._progress.advance(self._cell, units)

    def finish_cell(self, note: str = "") -> None:
        if self._cell is not None and note:
            task = self._progress.tasks[self._cell]
            self._progress.update(self._cell, description=f"{task.description} {note}")
        self._cell = None
        self._progress.advance(self._run)

    def log(self, message: str) -> None:
        self._progress.console.print(message)
