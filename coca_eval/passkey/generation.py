"""The passkey stop rule every backend's greedy decoding follows.

The answer is decided once the output's first integer is complete (a non-digit follows it), or at EOS,
or at ``max_new_tokens``: the tokens after that cannot change the score. Backends that decode step by
step (:mod:`coca_eval.backends.hf_generation`) stop on it; engines that cannot stop on a custom rule
generate more and cut with :func:`cut_at_stop`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_FIRST_INTEGER = re.compile(r"\d+")


def first_integer(text: str) -> int | None:
    match = _FIRST_INTEGER.search(text)
    return int(match.group()) if match else None


def answer_decided(text: str) -> bool:
    """True once the first integer in ``text`` is followed by something that is not a digit."""
    match = _FIRST_INTEGER.search(text)
    return match is not None and match.end() < len(text)


def stops_after(generated: Sequence[int], eos: set[int], max_new_tokens: int, decode: Callable) -> bool:
    """The stop rule of every backend: EOS, the token budget, or a decided answer."""
    if generated[-1] in eos or len(generated) >= max_new_tokens:
        return True
    return answer_decided(decode(generated))


def first_stop(tokens: Sequence[int], eos: set[int], max_new_tokens: int, decode: Callable) -> int | None:
    """How many of ``tokens`` step-by-step decoding keeps before the stop rule fires (None: not yet)."""
    for end in range(1, min(len(tokens), max_new_tokens) + 1):
        if stops_after(tokens[:end], eos, max_new_tokens, decode):
            return end
    return None


def cut_at_stop(tokens: Sequence[int], eos: set[int], max_new_tokens: int, decode: Callable) -> list[int]:
    """The prefix of a greedy continuation that early-stopped decoding would have produced.

    Greedy decoding is deterministic, so generating more tokens and cutting afterwards gives the very
    tokens the step-by-step rule gives; engines that cannot stop on a custom rule use this.
    """
    end = first_stop(tokens, eos, max_new_tokens, decode)
    return list(tokens[: max_new_tokens if end is None else end])
