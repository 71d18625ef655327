"""The CLI's two consoles, made on first use (rich's import is the CLI's largest startup cost)."""

from __future__ import annotations

import functools


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
