"""The passkey stop rule: the answer is decided once the output's first integer is complete.

A non-digit after the first integer (or EOS, or ``max_new_tokens``) ends decoding: the tokens after it
cannot change the score. The task hands this rule to the backend's ``generate_greedy``
(:class:`~coca_eval.backends.stopping.StopRule`), which stops on it or cuts at it.
"""

from __future__ import annotations

import re

from coca_eval.backends.stopping import StopRule

_FIRST_INTEGER = re.compile(r"\d+")


def first_integer(text: str) -> int | None:
    match = _FIRST_INTEGER.search(text)
    return int(match.group()) if match else None


def answer_decided(text: str) -> bool:
    """True once the first integer in ``text`` is followed by something that is not a digit."""
    match = _FIRST_INTEGER.search(text)
    return match is not None and match.end() < len(text)


def passkey_stop(max_new_tokens: int) -> StopRule:
    """EOS, the token budget, or a decided answer."""
    return StopRule(max_new_tokens, answer_decided)
