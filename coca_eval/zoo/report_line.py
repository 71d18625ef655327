"""Training progress: a rich bar with ETA on a terminal, a plain line every few steps in a log file."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

PLAIN_EVERY_SECONDS = 30.0


class StepReporter:
    """Shows step, loss and tokens/s; ``nohup`` logs get one line at most every 30 s and at the end."""

    def __init__(self, name: str, total: int, done: int, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.name, self.total, self._last_plain = name, total, 0.0
        self._progress = None
        if self.console.is_terminal:
            self._progress = Progress(
                TextColumn(f"[bold]{name}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self._task = self._progress.add_task(name, total=total, completed=done, info="")

    def __enter__(self) -> StepReporter:
        if self._progress is not None:
            self._progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def note(self, text: str) -> None:
        """One line above the bar (or in the log), e.g. a speed-up the hardware cannot give."""
        self.console.print(f"{self.name}: {text}", highlight=False)

    def update(self, step: int, loss: float, tokens_per_s: float) -> None:
        info = f"loss {loss:.3f}  {tokens_per_s:,.0f} tok/s"
        if self._progress is not None:
            self._progress.update(self._task, completed=step, info=info)
            return
        now = time.monotonic()
        if now - self._last_plain >= PLAIN_EVERY_SECONDS or step == self.total:
            self._last_plain = now
            self.console.print(f"{self.name} step {step}/{self.total} {info}", highlight=False)
