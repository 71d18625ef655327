"""The cells of a run as its shard files hold them: each cell's parts gathered from every file, the
units no file holds, and the cell formed by the task's ``combine`` once nothing is missing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from coca_eval.distributed.partial import differing_keys, merge_contexts, partial_detail
from coca_eval.distributed.partition import Partition
from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell, Run

FAILED = ("oom", "error")
SHOWN_CELLS = 1  # cells named per missing shard (then "and N more cells")


@dataclass
class Slot:
    """One cell of the run as the shards hold it: the union of their parts, or a failed cell."""

    cell: Cell  # the first shard's cell: where the merged cell's fields come from
    source: Path | None = None  # the file of the first partial cell (named when another disagrees)
    units: int = 0
    parts: dict[int, tuple[Path, dict]] = field(default_factory=dict)  # unit -> (file, part)
    contexts: list[dict] = field(default_factory=list)
    failed: Cell | None = None

    @property
    def name(self) -> str:
        return f"{self.cell.task} {self.cell.method!r} @ {self.cell.length or self.cell.dataset}"


def collect(shards: Iterable[tuple[Path, Run]]) -> list[Slot]:
    """Every cell's slot, in the first file's order, with the union of the shards' parts."""
    slots: dict[tuple, Slot] = {}
    for path, run in shards:
        for cell in run.cells:
            key = (cell.task, cell.method, cell.metric, cell.length, cell.dataset)
            slot = slots.setdefault(key, Slot(cell))
            add_cell(slot, cell, path)
    return list(slots.values())


def add_cell(slot: Slot, cell: Cell, path: Path) -> None:
    """One shard file's cell into its slot; a unit two files give differently is refused."""
    if cell.status in FAILED:
        slot.failed = slot.failed or cell
        return
    if cell.status != "partial":
        raise CocaEvalError(f"{path}: {slot.name} is {cell.status}, not a shard's partial cell")
    detail = partial_detail(cell, str(path))
    if slot.contexts and detail.units != slot.units:
        raise CocaEvalError(f"{path}: {slot.name} has {detail.units} units, other shards {slot.units}")
    if slot.contexts:
        _check_same_documents(slot, detail.context, path)
    slot.units, slot.source = detail.units, slot.source or path
    slot.contexts.append(detail.context)
    for unit, part in detail.parts.items():
        held = slot.parts.get(unit)
        if held is not None and held[1] != part:
            raise CocaEvalError(f"{slot.name} unit {unit} differs between {held[0]} and {path}; "
                                "give one file per shard")  # fmt: skip
        slot.parts[unit] = (path, part)


def _check_same_documents(slot: Slot, context: dict, path: Path) -> None:
    """A context entry that maps units to their data (ppl's document hashes) must agree between the
    files: shards that read other versions of a dataset would form a number that matches neither."""
    for key, theirs in context.items():
        ours = slot.contexts[0].get(key)
        if isinstance(theirs, dict) and isinstance(ours, dict) and theirs != ours:
            raise CocaEvalError(
                f"{slot.source} and {path} read different data: {slot.name} {key} differ for "
                f"{differing_keys(ours, theirs)}"
            )


def check_complete(slots: Sequence[Slot], count: int) -> None:
    """Name every shard whose units are missing, with the first cell that misses them."""
    missing: dict[int, list[str]] = {}
    for slot in slots:
        if slot.failed is not None:
            continue
        by_shard: dict[int, list[int]] = {}  # grouped by owner: a forged N of 10**12 costs nothing
        for unit in sorted(set(range(slot.units)) - set(slot.parts)):
            by_shard.setdefault(Partition(0, count).owner_of(unit).index, []).append(unit)
        for index, units in by_shard.items():
            missing.setdefault(index, []).append(f"{slot.name} units {', '.join(map(str, units))}")
    if missing:
        raise CocaEvalError(
            "; ".join(_missing_text(Partition(i, count), cells) for i, cells in sorted(missing.items()))
        )


def _missing_text(shard: Partition, cells: list[str]) -> str:
    more = len(cells) - SHOWN_CELLS
    return f"shard {shard.label} missing: {', '.join(cells[:SHOWN_CELLS])}" + (
        f" (and {more} more cells)" if more > 0 else ""
    )


def form_cell(slot: Slot) -> Cell:
    """The merged cell: a shard's failure as it is, else the task's ``combine`` over every part."""
    from coca_eval.taskspec import spec_for

    if slot.failed is not None:
        return slot.failed
    combine = spec_for(slot.cell.task).combine
    if combine is None:
        raise CocaEvalError(f"task {slot.cell.task!r} has no combine hook: its shards cannot be merged")
    base = slot.cell.model_dump(include={"task", "method", "metric", "length", "dataset"})
    parts = [slot.parts[unit][1] for unit in range(slot.units)]
    try:
        cell = combine(base, parts, merge_contexts(slot.contexts))
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as exc:  # forged parts
        reason = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"{slot.name}: the shards' parts do not form a cell: {reason}") from None
    return cell.model_copy(update={"device": slot.cell.device, "dtype": slot.cell.dtype})
