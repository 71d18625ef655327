"""``partial`` cells: one shard's parts of a cell, kept until ``coca-eval merge`` forms the cell.

A partial cell's ``detail`` holds everything the task's ``combine`` needs besides the model: the
parts by unit index, how many units the cell has, which shard computed them, and the ``context`` the
task measured along the way (ppl's BOS policy and stride, passkey's template). Its value is null and
``n`` is unset: a shard alone has no number to show.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coca_eval.distributed.partition import Partition
from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell


class PartialDetail(BaseModel):
    """The ``detail`` of a ``partial`` cell, validated when a shard file is merged."""

    model_config = ConfigDict(extra="forbid")

    shard: str
    units: int = Field(ge=1)
    parts: dict[int, dict[str, Any]]
    context: dict[str, Any]

    @model_validator(mode="after")
    def _parts_are_units(self) -> PartialDetail:
        outside = sorted(unit for unit in self.parts if not 0 <= unit < self.units)
        if outside:
            raise ValueError(f"part {outside[0]} is not one of the cell's {self.units} units")
        return self


def partial_cell(base: dict, parts: dict[int, dict], units: int, context: dict, partition: Partition) -> Cell:
    detail = PartialDetail(shard=partition.label, units=units, parts=parts, context=context)
    return Cell(**base, status="partial", detail=detail.model_dump(mode="json"))


def partial_detail(cell: Cell, where: str) -> PartialDetail:
    """The typed detail of a partial cell; a hand-edited one is one line naming ``where``."""
    try:
        return PartialDetail.model_validate(cell.detail)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise CocaEvalError(f"{where}: partial cell detail is invalid at {at}: {first['msg']}") from None


def merge_contexts(contexts: list[dict[str, Any]]) -> dict[str, Any]:
    """One context from the processes that computed a cell's parts.

    Values that change a number (a BOS policy, a stride) must agree. A flag that only says how one
    process worked (passkey's ``prefix_reuse``: whether it decoded more than one prompt at once) may
    differ; the merged flag says whether any process did it.
    """
    merged = dict(contexts[0])
    for context in contexts[1:]:
        if set(context) != set(merged):
            raise CocaEvalError(
                f"the shards recorded different context fields: {sorted(set(context) ^ set(merged))}"
            )
        for key, value in context.items():
            if value == merged[key]:
                continue
            if isinstance(value, bool) and isinstance(merged[key], bool):
                merged[key] = merged[key] or value
            elif isinstance(value, dict) and isinstance(merged[key], dict):
                names = differing_keys(merged[key], value)
                raise CocaEvalError(f"the processes read different data: {key} differ for {names}")
            else:
                raise CocaEvalError(f"the shards disagree on {key}: {merged[key]!r} and {value!r}")
    return merged


def differing_keys(ours: dict, theirs: dict, shown: int = 4) -> str:
    """The entries in which two dicts differ, by name: ``'doc3', 'doc7' (and 2 more)``."""
    differ = sorted(str(k) for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    more = f" (and {len(differ) - shown} more)" if len(differ) > shown else ""
    return ", ".join(map(repr, differ[:shown])) + more
