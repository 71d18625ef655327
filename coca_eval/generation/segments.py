"""Token segments: text pieces tokenised once and concatenated into prompts of exactly N tokens.

RULER sizes a prompt by tokenising the whole text again and again (a binary search over the haystack
size) and still ends up short of N. We tokenise each piece (a sentence, a needle, a template part) on
its own, as it reads inside running text, and count: the haystack is a stream of pieces cut to the
token, so every prompt is exactly N tokens.

A piece is tokenised after a fixed anchor and the anchor's tokens are dropped, so ``" The"`` becomes the
tokens a tokenizer gives a word after a space, SentencePiece's dummy prefix included or not. When the
anchor merges with the piece (the split is not clean), the piece is tokenised on its own instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Encode = Callable[[str], list[int]]
ANCHOR = "a"


class TooShort(Exception):
    """A fill cannot fit its fixed content (needles, chains, required words) in the tokens it was given."""

    def __init__(self, needed: int, what: str) -> None:
        super().__init__(f"{what}: {needed} tokens needed")
        self.needed, self.what = needed, what
        self.fixed: int | None = None  # the prompt's other tokens, set by the builder


class Pieces:
    """Tokenises text pieces for one tokenizer, remembering what it has tokenised."""

    def __init__(self, encode: Encode) -> None:
        self.encode = encode
        self._anchor = encode(ANCHOR)
        self._cache: dict[str, list[int]] = {}

    def piece(self, text: str) -> list[int]:
        """``text``'s tokens as they read inside running text, remembered (pieces used again and again)."""
        if text not in self._cache:
            self._cache[text] = self.fresh(text)
        return self._cache[text]

    def fresh(self, text: str) -> list[int]:
        """The same, not remembered: pieces drawn once per sample (distractors, coded words, questions)."""
        ids = self.encode(ANCHOR + text)
        n = len(self._anchor)
        return ids[n:] if ids[:n] == self._anchor else self.encode(text)


@dataclass
class Stream:
    """The first tokens of a sequence of pieces and where each piece ends (its boundaries)."""

    ids: list[int]
    bounds: list[int]  # token offsets where a piece starts (0 included), all <= len(ids)


def take(pieces: Iterator[list[int]], n_tokens: int) -> Stream:
    """Concatenate pieces until ``n_tokens``, cutting the last one to the token."""
    ids: list[int] = []
    bounds = [0]
    while len(ids) < n_tokens:
        ids += next(pieces)
        bounds.append(len(ids))
    return Stream(ids[:n_tokens], [b for b in bounds if b <= n_tokens])


def nearest_bound(bounds: list[int], target: float, lowest: int = 1) -> int:
    """The boundary (index ``lowest`` or later) nearest ``target``; ties go to the earlier one."""
    usable = bounds[lowest:] or bounds[-1:]
    i = bisect.bisect_left(usable, target)
    candidates = usable[max(0, i - 1) : i + 1]
    return min(candidates, key=lambda b: (abs(b - target), b))


def insert(stream: Stream, inserts: list[tuple[float, list[int]]]) -> tuple[list[int], list[int]]:
    """Put each ``(depth, ids)`` at the piece boundary nearest ``depth`` of the stream (never before
    its first piece, which carries no separator); returns the ids and each insert's start offset, in
    the order given. Inserts at the same boundary keep their given order."""
    at = [nearest_bound(stream.bounds, depth * len(stream.ids)) for depth, _ in inserts]
    order = sorted(range(len(inserts)), key=lambda i: (at[i], i))
    out: list[int] = []
    starts = [0] * len(inserts)
    done = 0
    for i in order:
        out += stream.ids[done : at[i]]
        done = at[i]
        starts[i] = len(out)
        out += inserts[i][1]
    out += stream.ids[done:]
    return out, starts
