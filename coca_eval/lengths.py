"""The ``--lengths`` grammar shared by every task.

``512..32k`` is every power of two from 512 to 32768; ``512,1024,4096`` is a list; both forms mix
(``512,1k..4k``). ``k`` means 1024, so ``32k`` is 32768 as in the papers' tables.
"""

from __future__ import annotations

import re

from coca_eval.errors import CocaEvalError

_NUMBER = re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")
_MULTIPLIER = {"": 1, "k": 1024, "m": 1024 * 1024}


def parse_length(text: str) -> int:
    """One positive token count such as ``2048`` or ``2k``."""
    match = _NUMBER.match(text)
    if not match:
        raise CocaEvalError(f"invalid length {text!r}: expected a positive integer such as 2048 or 2k")
    value = int(match.group(1)) * _MULTIPLIER[match.group(2).lower()]
    if value <= 0:
        raise CocaEvalError(f"invalid length {text!r}: must be positive")
    return value


def _power_of_two_range(low: int, high: int, text: str) -> list[int]:
    if low > high:
        raise CocaEvalError(f"invalid length range {text!r}: start {low} is above end {high}")
    out, value = [], low
    while value <= high:
        out.append(value)
        value *= 2
    if out[-1] != high:
        out.append(high)
    return out


def parse_lengths(text: str) -> list[int]:
    """Parse the ``--lengths`` value into a sorted list of distinct token counts."""
    if not text or not text.strip():
        raise CocaEvalError("--lengths is empty")
    lengths: set[int] = set()
    for part in text.split(","):
        if ".." in part:
            low_text, _, high_text = part.partition("..")
            lengths.update(_power_of_two_range(parse_length(low_text), parse_length(high_text), part))
        else:
            lengths.add(parse_length(part))
    return sorted(lengths)


def format_length(value: int) -> str:
    """Column header as the papers print it: 32768 -> ``32k``; 1000 stays ``1000``; 0 (BABILong's
    facts-only set, the one length that is not a token count) is ``0k`` as BABILong names it."""
    if value == 0:
        return "0k"
    return f"{value // 1024}k" if value >= 1024 and value % 1024 == 0 else str(value)
