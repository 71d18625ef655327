"""Checks shared by every task's parameter dataclass (presets overlaid with command-line options)."""

from __future__ import annotations

from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import parse_lengths


def normalise_task_values(values: dict, fields: dict, task: str) -> dict:
    """Known parameter names only; ``lengths`` parsed (grammar or list) into a sorted tuple."""
    unknown = set(values) - set(fields)
    if unknown:
        raise CocaEvalError(f"unknown {task} parameter(s): {', '.join(sorted(unknown))}")
    values = dict(values)
    if isinstance(values.get("lengths"), str):
        values["lengths"] = tuple(parse_lengths(values["lengths"]))
    elif values.get("lengths") is not None:
        values["lengths"] = tuple(sorted({int(v) for v in values["lengths"]}))
    return values


def require_positive_int(option: str, value: Any, allow_none: bool = False) -> None:
    """``--option`` must be a positive integer (YAML presets can carry anything)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CocaEvalError(f"{option} must be a positive integer (got {value!r})")
