"""One process's share of a run: which units it computes, and how it turns its parts into a cell.

A task asks its share two things inside its cell loop: :meth:`Share.owns` (compute unit ``i`` here?)
and, once its own units are journaled, :meth:`Share.cell` (form the cell). The plain run owns every
unit and combines at once; a ``--shard`` run keeps its parts in a ``partial`` cell for ``coca-eval
merge``; a torchrun rank gathers every rank's parts first (:mod:`coca_eval.distributed.torchrun`).
Whichever it is, the cell is made by the task's own ``combine`` function, so all three agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coca_eval.distributed.partial import partial_cell
from coca_eval.distributed.partition import Partition
from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.results import Cell

Combine = Callable[[dict[str, Any], list[dict], dict[str, Any]], Cell]  # (base, parts in order, context)


def in_order(parts: dict[int, dict], units: int) -> list[dict]:
    """Every unit's part, by unit index (a missing one is a bug in the caller: KeyError)."""
    return [parts[i] for i in range(units)]


@dataclass(frozen=True)
class Share:
    """The plain run: one process, every unit, the cell formed where its parts are."""

    partition: Partition = field(default_factory=Partition)

    @property
    def whole(self) -> bool:
        """The plain run (no shard, no ranks): the one a task without ``combine`` supports."""
        return self.journal_tag is None

    @property
    def journal_tag(self) -> str | None:
        """Part of the journal's file name (and cache identity), so no two shares write one journal."""
        return None

    @property
    def leads(self) -> bool:
        """Whether this process prints the tables and writes the results file."""
        return True

    def owns(self, unit: int) -> bool:
        return self.partition.owns(unit)

    def owned(self, units: int) -> list[int]:
        """The indices of a cell's ``units`` units this process computes, in order."""
        return self.partition.owned(units)

    def finished(self, journal: Journal, key: str) -> Cell | None:
        """The journaled cell this process may reuse without loading a model."""
        return journal.finished(key)

    def agree(self, identity: dict[str, Any]) -> None:
        """Refuse to start unless every process that forms this run's cells together runs the same
        ``identity`` (task, parameters, methods, weights, data); one process agrees with itself."""

    def cell(self, base: dict, parts: dict[int, dict], units: int, context: dict, combine: Combine) -> Cell:
        """The cell of ``units`` units from this process's ``parts`` (here: all of them)."""
        return combine(base, in_order(parts, units), context)

    def abandon(self, exc: BaseException) -> None:
        """A cell failed here (out of memory) before :meth:`cell`; no other process waits for it."""

    def config(self) -> dict[str, Any]:
        """What the run's config records about the split (nothing for the plain run)."""
        return {}


WHOLE = Share()


@dataclass(frozen=True)
class ShardShare(Share):
    """``--shard K/N``: this process computes its slice and writes ``partial`` cells to merge later."""

    @property
    def journal_tag(self) -> str:
        return f"shard-{self.partition.index + 1}-of-{self.partition.count}"

    def finished(self, journal: Journal, key: str) -> Cell | None:
        """A partial cell this shard journaled before (a rerun of a finished shard loads no model)."""
        cell = journal.cells.get(key)
        mine = cell is not None and cell.status == "partial"
        return cell if mine and cell.detail.get("shard") == self.partition.label else None

    def owned(self, units: int) -> list[int]:
        """This shard's units; a shard past the cell's last unit would write an empty part and exit
        0 with nothing computed, so that is refused (the cells finished before stay journaled)."""
        if units <= self.partition.index:
            raise CocaEvalError(
                f"--shard {self.partition.label}: a cell here has only {units} units (documents or "
                f"samples), so shard {self.partition.index + 1} has none to compute; split into at most "
                f"{units} shards"
            )
        return super().owned(units)

    def cell(self, base: dict, parts: dict[int, dict], units: int, context: dict, combine: Combine) -> Cell:
        return partial_cell(base, parts, units, context, self.partition)

    def config(self) -> dict[str, Any]:
        """``shard: {index, count}`` with the 1-based index ``--shard`` was given."""
        return {"shard": {"index": self.partition.index + 1, "count": self.partition.count}}
