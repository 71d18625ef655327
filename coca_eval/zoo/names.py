"""A zoo model's name is a folder: ``OUT/NAME`` holds its checkpoints, loss log and ``model/``.

A name read from a user's YAML file could otherwise be ``/abs/dir`` or ``../../x`` and put those files
anywhere, so a name is a plain folder name (letters, digits, ``.``, ``_``, ``-``, not starting with a
dot) and the folder it names must resolve inside the parent it was given (a link there pointing out is
refused too).

The catalogs (the entries, the fine-tunes) are keyed by these names: :func:`catalog` builds one and
:func:`look_up` reads it, so an unknown name reads the same in both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError

NAME_PATTERN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
NAME_RULE = "letters, digits, '.', '_' and '-' only, not starting with a dot"


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a zoo run folder, or None when it can."""
    if NAME_PATTERN.fullmatch(name) is None:
        return f"name {name!r} must be {NAME_RULE} (it names a folder)"
    return None


def run_dir_under(parent: Path, name: str) -> Path:
    """``parent / name``, refused unless ``name`` is a plain folder name resolving inside ``parent``."""
    if (problem := name_problem(name)) is not None:
        raise CocaEvalError(problem)
    run_dir = Path(parent) / name
    if not run_dir.resolve().is_relative_to(Path(parent).resolve()):
        raise CocaEvalError(f"{run_dir} resolves to {run_dir.resolve()}, outside {parent}")
    return run_dir


def catalog(*specs: Any) -> dict[str, Any]:
    """Specs keyed by their ``name``, in the order given (the order commands list and train them)."""
    return {spec.name: spec for spec in specs}


def look_up(entries: dict[str, Any], name: str, kind: str) -> Any:
    """``entries[name]``, or a one-line error naming ``kind`` and every name the catalog knows."""
    if name not in entries:
        raise CocaEvalError(f"unknown {kind} {name!r} (known: {', '.join(entries)})")
    return entries[name]
