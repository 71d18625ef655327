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
