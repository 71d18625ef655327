"""Progress with ETA for every long loop: one bar per cell (method x length) plus a run total.

On a terminal rich draws live bars. Elsewhere (a CI log, ``nohup``) rich would print nothing until the
end, and then every bar at once, so the bars are off there and plain lines are written instead: one per
finished cell, and a heartbeat at least every ``PLAIN_INTERVAL_S`` seconds while a cell runs (the cell,
its units done and the ETA), written by a background thread so that a unit taking minutes (a batch of
long answers) does not leave the log silent.

Inside a cell, the backend reports the tokens it has run through the model (:func:`work_done`: prompt
tokens prefilled, rows x steps decoded) against what the runner expects the call to take
(:meth:`CellProgress.expect_work`), so a cell whose first samples take minutes (a batch decoded
together, on a loaded machine) shows tokens done and an ETA from their pace instead of "eta unknown".
"""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

stderr = Console(stderr=True)
PLAIN_INTERVAL_S = 30.0
_ACTIVE: ContextVar[CellProgress | None] = ContextVar("coca_eval_progress", default=None)


def work_done(tokens: int) -> None:
    """A backend ran ``tokens`` more tokens through the model for the current cell (nothing outside a
    run's progress: a backend used on its own reports to no one)."""
    progress = _ACTIVE.get()
    if progress is not None:
        progress.add_work(tokens)


class CellProgress:
    """Tracks units of work (windows, samples) for the current cell and for the whole run."""

    def __init__(self, total_cells: int, console: Console | None = None) -> None:
        console = console or stderr
        self._plain = not console.is_terminal
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            speed_estimate_period=3600.0,  # units of minutes (a batch of long answers) still give a rate
            disable=self._plain,  # else rich prints every bar, finished, at the end of a logged run
        )
        self._run = self._progress.add_task("all cells", total=total_cells)
        self._cell: int | None = None
        self._cell_start = (time.monotonic(), 0)  # when the current cell started, and its units done then
        self._last_line = time.monotonic()
        self._stopped = threading.Event()
        self._heart: threading.Thread | None = None
        self._work = (0, 0, time.monotonic(), "")  # tokens done, expected, since when, what is decoding
        self._token = None
        self._from_journal = 0  # finished cells taken from the journal since the last line said so

    def __enter__(self) -> CellProgress:
        self._token = _ACTIVE.set(self)
        self._progress.__enter__()
        if self._plain:
            self._heart = threading.Thread(target=self._heartbeat, name="progress-heartbeat", daemon=True)
            self._heart.start()
        return self

    def __exit__(self, *exc) -> None:
        self._say_journaled()
        if self._token is not None:
            _ACTIVE.reset(self._token)
        self._stopped.set()
        if self._heart is not None:
            self._heart.join()
        self._progress.__exit__(*exc)

    def _heartbeat(self) -> None:
        """Plain mode: while a cell runs, a line whenever none was written for ``PLAIN_INTERVAL_S``."""
        while not self._stopped.wait(min(1.0, PLAIN_INTERVAL_S / 4)):
            cell = self._cell
            if cell is not None and time.monotonic() - self._last_line >= PLAIN_INTERVAL_S:
                self._plain_line(self._cell_status(cell))

    def _cell_status(self, cell: int) -> str:
        """``cell: 3/8 done, eta 412s``: the ETA from this cell's own pace since it started here (units
        found done in the journal excluded); before its first unit, from the pace of the tokens the
        backend has run of those it is expected to run (``1,024/9,000 tokens of 3 cells decoding
        together``); unknown only when neither is known."""
        task = self._progress.tasks[cell]
        done_here = task.completed - self._cell_start[1]
        eta, tokens = "eta unknown", ""
        done, expected, since, what = self._work
        if expected:
            tokens = f", {done:,}/{expected:,} tokens{what}"
        if done_here > 0 and task.total is not None:
            pace = (time.monotonic() - self._cell_start[0]) / done_here
            eta = f"eta {pace * (task.total - task.completed):.0f}s"
        elif 0 < done < expected:
            eta = f"eta {(time.monotonic() - since) / done * (expected - done):.0f}s"
        return f"{task.description}: {task.completed:g}/{task.total:g} done{tokens}, {eta}"

    def expect_work(self, tokens: int, what: str = "") -> None:
        """The current call will run about ``tokens`` through the model (prompts plus answer budgets);
        ``what`` says whose (`` of 3 cells decoding together``)."""
        self._work = (0, tokens, time.monotonic(), what)

    def add_work(self, tokens: int) -> None:
        done, expected, since, what = self._work
        self._work = (done + tokens, expected, since, what)
        if self._plain and self._cell is not None and time.monotonic() - self._last_line >= PLAIN_INTERVAL_S:
            self._plain_line(self._cell_status(self._cell))

    def set_total(self, total_cells: int) -> None:
        """The run's cell count, once the task that decides it exists."""
        self._progress.update(self._run, total=total_cells)

    def start_cell(self, description: str, total: int, done: int = 0) -> None:
        self._say_journaled()
        self._cell = self._progress.add_task(description, total=total, completed=done)
        self._cell_start = (time.monotonic(), done)
        self._work = (0, 0, time.monotonic(), "")

    def advance(self, units: int = 1) -> None:
        if self._cell is not None:
            self._progress.advance(self._cell, units)
            if self._plain and time.monotonic() - self._last_line >= PLAIN_INTERVAL_S:
                self._plain_line(self._cell_status(self._cell))

    def finish_cell(self, note: str = "") -> None:
        description = ""
        if self._cell is not None:
            description = self._progress.tasks[self._cell].description + (f" {note}" if note else "")
            if note:
                self._progress.update(self._cell, description=description)
        self._cell = None
        self._progress.advance(self._run)
        if self._plain:
            run = self._progress.tasks[self._run]
            plain = Text.from_markup(description).plain
            self._plain_line(f"cell {run.completed:g}/{run.total:g} done {plain}".rstrip())

    def journaled_cell(self) -> None:
        """A cell already finished in the journal: it counts toward the run, and a resumed run says in
        one line how many it took (not "cell i/n done" for each, as if computed)."""
        self._from_journal += 1
        self._progress.advance(self._run)

    def _say_journaled(self) -> None:
        if self._from_journal:
            run, n = self._progress.tasks[self._run], self._from_journal
            self._from_journal = 0
            said = f"{n} cell{'s' * (n != 1)} taken from the journal ({run.completed:g}/{run.total:g} done)"
            if self._plain:
                self._plain_line(said)
            else:
                self.log(said)

    def _plain_line(self, text: str) -> None:
        elapsed = self._progress.tasks[self._run].elapsed or 0.0
        self._progress.console.print(f"[{elapsed:7.1f}s] {text}", markup=False, highlight=False)
        self._last_line = time.monotonic()

    def log(self, message: str) -> None:
        self._progress.console.print(message)
