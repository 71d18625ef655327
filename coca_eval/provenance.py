"""Where a run's code came from: the checkout's commit and whether it had uncommitted edits.

Both are recorded in every results file, so a number can be traced to the code that made it; an
installed wheel (no git) records None for both rather than failing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def _git(*args: str) -> str | None:
    """``git args`` run in coca-eval's own folder; its stdout, or None when git is absent or fails."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def git_revision() -> str | None:
    """The checkout's commit when coca-eval runs from git (None for an installed wheel)."""
    out = _git("rev-parse", "HEAD")
    return out.strip() or None if out is not None else None


def git_dirty() -> bool | None:
    """Whether the checkout has uncommitted changes (None outside git): a run made from an edited
    tree is not reproducible from its commit alone."""
    out = _git("status", "--porcelain", "--untracked-files=no")
    return bool(out.strip()) if out is not None else None


def code_provenance() -> dict[str, str | bool | None]:
    """``git`` and ``git_dirty`` for a :class:`~coca_eval.results.Run`: ``Run(**code_provenance(), ...)``.

    Every producer of results files records both through this one call, so none records one of them
    without the other."""
    return {"git": git_revision(), "git_dirty": git_dirty()}
