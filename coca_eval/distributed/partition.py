"""Which units of a cell one process computes: a deterministic slice ``i % count == index``.

The same value serves a batch scheduler's shards (``--shard K/N``, one process per array task, merged
afterwards) and torchrun's ranks (``RANK`` of ``WORLD_SIZE``, gathered at the end of every cell). A
unit is what a task already journals as one part: a document for ``ppl`` and the analyses, a sample
for ``passkey``. Striding (rather than cutting contiguous blocks) keeps the slices balanced when the
unit count does not divide evenly and needs no knowledge of the count in advance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from coca_eval.errors import CocaEvalError

_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Partition:
    """Slice ``index`` (0-based, like a rank) of ``count``; ``Partition()`` is the whole cell."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"no slice {self.index} of {self.count}")

    def owns(self, unit: int) -> bool:
        return unit % self.count == self.index

    def owned(self, units: int) -> list[int]:
        """The unit indices of a cell of ``units`` units that this slice computes, in order."""
        return list(range(self.index, units, self.count))

    @property
    def label(self) -> str:
        """``K/N`` as ``--shard`` writes it (1-based)."""
        return f"{self.index + 1}/{self.count}"

    def owner_of(self, unit: int) -> Partition:
        """The slice of the same split that computes ``unit``."""
        return Partition(unit % self.count, self.count)


def parse_shard(text: str) -> Partition:
    """``--shard K/N`` (1 <= K <= N) -> the 0-based :class:`Partition`; anything else is one line."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise CocaEvalError(f"--shard takes K/N, e.g. 2/8 for the second of eight shards (got {text!r})")
    number, count = int(match[1]), int(match[2])
    if count < 1:
        raise CocaEvalError(f"--shard {text}: N must be at least 1")
    if not 1 <= number <= count:
        raise CocaEvalError(f"--shard {text}: K counts from 1 to N={count}")
    return Partition(number - 1, count)
