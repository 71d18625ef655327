"""The ``--lengths`` grammar shared by every task.

``512..32k`` is every power of two from 512 to 32768; ``512,1024,4096`` is a list; both forms mix
(``512,1k..4k``). ``k`` means 1024, so ``32k`` is 32768 as in the papers' tables.

Since the comma separates lengths, it cannot be a thousands separator: ``4,096`` would silently run the
lengths 4 and 96. Text that reads as one number written with thousands separators is refused with the
number it most likely meant: a part with a leading zero (``096``: no length is written so), or a part of
one to three digits followed by parts of exactly three (``32,768``) that together make a whole number
of k of the form 2^a or 3 x 2^a (the context sizes models and papers use). Other lists of short parts
stay lists (``64,128``, ``230,300``): they are what users write for small runs, and no one writes
64128 for a length. A length below what a task can build is refused by :func:`check_shortest`.
"""

from __future__ import annotations

import re

from coca_eval.errors import CocaEvalError

_NUMBER = re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")
_BARE = re.compile(r"^\s*(\d+)\s*$")  # digits without a unit: the parts a thousands separator joins
_OPENS_RANGE = re.compile(r"^\s*(\d+)\s*\.\.")  # ``048..8k``: a range opening with bare digits
_MULTIPLIER = {"": 1, "k": 1024, "m": 1024 * 1024}


def parse_length(text: str) -> int:
    """One positive token count such as ``2048`` or ``2k``."""
    match = _NUMBER.match(text)
    if not match:
        raise CocaEvalError(f"invalid length {text!r}: expected a positive integer such as 2048 or 2k")
    digits, unit = match.group(1), match.group(2)
    if len(digits) > 1 and digits.startswith("0"):
        meant = f"{int(digits)}{unit}"
        raise CocaEvalError(
            f"invalid length {text.strip()!r}: lengths have no leading zero; did you mean {meant}?"
        )
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
    parts = text.split(",")
    _refuse_thousands_separators(text, parts)
    lengths: set[int] = set()
    for part in parts:
        if ".." in part:
            low_text, _, high_text = part.partition("..")
            lengths.update(_power_of_two_range(parse_length(low_text), parse_length(high_text), part))
        else:
            lengths.add(parse_length(part))
    return sorted(lengths)


def _refuse_thousands_separators(text: str, parts: list[str]) -> None:
    """Refuse parts that read as one number with thousands separators (see the module's docstring),
    naming the number meant, before they are taken as several lengths."""
    bare = [match.group(1) if (match := _BARE.match(part)) else None for part in parts]
    opening = [match.group(1) if (match := _OPENS_RANGE.match(part)) else None for part in parts]
    start = 0
    while start < len(bare):
        head, end = bare[start], start + 1
        while head is not None and len(head) <= 3 and end < len(bare) and len(bare[end] or "") == 3:
            end += 1
        if head is not None and len(head) <= 3 and end < len(bare) and len(opening[end] or "") == 3:
            bare[end], end = opening[end], end + 1  # ``2,048..8k``: the range opens with the number's tail
        group = bare[start:end]
        if len(group) > 1:
            joined = int("".join(group))
            if any(g.startswith("0") for g in group[1:]) or _round_length(joined):
                numbers = [str(int(g)) for g in group]
                read = f"{', '.join(numbers[:-1])} and {numbers[-1]}"
                raise CocaEvalError(
                    f"lengths {','.join(group)!r} read as the lengths {read} (a comma separates lengths, "
                    f"never thousands); did you mean {joined}?"
                )
        start = end


def _round_length(value: int) -> bool:
    """A whole number of k of the form 2^a or 3 x 2^a (8k, 24k, 32k, 96k...)."""
    k, rest = divmod(value, 1024)
    odd = k // 3 if k % 3 == 0 else k
    return rest == 0 and k > 0 and odd & (odd - 1) == 0


def check_shortest(lengths, task: str, shortest: int, why: str) -> None:
    """Refuse, before any model loads, a length below the shortest ``task`` can build (``why`` says
    what fills it). Every command states it alike; a length that is ``k`` short of making sense is
    named with the ``k`` (``4`` -> ``4k``). BABILong's facts-only ``0`` is no token count: not checked."""
    for length in sorted(lengths):
        if 0 < length < shortest:
            hint = f"; did you mean {length}k?" if length * 1024 >= shortest else ""
            raise CocaEvalError(
                f"length {length} is below the shortest {task} can build, {shortest} tokens ({why}){hint}"
            )


def shortest_answered(params, fixed=lambda task: (0, "")) -> tuple[int, str]:
    """The shortest N every task of a generation run (``params.tasks``, ``params.prompt_length``) can
    build: one prompt token, the answer budget where N counts it, and ``fixed(task)`` tokens of fixed
    text (with the words that say which). The task that needs most sets it, and is named."""
    needs = []
    for task in params.tasks:
        answer = -params.prompt_length(0, task)  # the budget N holds (0 where N is the prompt alone)
        words, what = fixed(task)
        parts = [f"{words} words of {what}, a token each at least"] if words else []
        parts += [f"its {answer}-token answer budget"] if answer > 0 else []
        needs.append((words + answer + 1, f"{task}: {', '.join([*parts, 'one token of context'])}"))
    return max(needs, key=lambda need: need[0])


def words_of(*texts: str) -> int:
    """Whitespace-separated words of a task's fixed text, its ``{context}`` left out: a floor on its
    tokens in any tokenizer, since the shipped ones split words apart before they merge characters (a
    placeholder such as ``{query}`` is filled with one word or more)."""
    return sum(len(text.replace("{context}", " ").split()) for text in texts)


def format_length(value: int) -> str:
    """Column header as the papers print it: 32768 -> ``32k``; 1000 stays ``1000``; 0 (BABILong's
    facts-only set, the one length that is not a token count) is ``0k`` as BABILong names it."""
    if value == 0:
        return "0k"
    return f"{value // 1024}k" if value >= 1024 and value % 1024 == 0 else str(value)
