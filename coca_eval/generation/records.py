"""The per-sample record a generation cell keeps in ``detail["samples"]``: the gate pairs samples by
``index`` (and checks their references), the report bins samples by needle depth; and the check, run on
every load, that a cell's samples earn the scores it claims."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SampleRecord(BaseModel):
    """One prompt: what it asked for, what the model answered and how much of it was right.

    The gate needs ``index, answers, score``; ``found`` says which references the output held,
    ``depths`` (NIAH) where the needles sat. Unknown keys (the family's detail) are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    index: int
    answers: list[str]
    score: float = Field(ge=0.0, le=1.0)
    found: list[bool] | None = None
    output: str | None = None
    depths: list[float] | None = None

    @property
    def full_credit(self) -> bool:
        """The sample earned its whole score (RULER: every reference found, or one for ``_part``)."""
        return self.score == 1.0


def records_of(detail: dict) -> list[SampleRecord]:
    return [SampleRecord.model_validate(sample) for sample in detail.get("samples") or []]


def scored_contradiction(cell, task, score) -> str | None:
    """The contradiction check of a family scored per sample by ``score(task, output, answers)`` (RULER,
    HELMET): each sample's score (and found references, where kept) is what its output earns, and the
    cell's value and count are its samples'. ``task`` None (a task this installation does not know):
    only the value and count are checked."""
    from coca_eval.results import value_mismatch

    records = records_of(cell.detail)
    if cell.status != "ok" or not records:
        return None
    for record in records:
        if task is None or record.output is None:
            continue
        scored = score(task, record.output, record.answers, record.model_dump())
        if scored["score"] != record.score or record.found not in (None, scored.get("found")):
            return f"sample {record.index} is scored {record.score} but its output earns {scored['score']}"
    return value_mismatch(cell, 100 * sum(r.score for r in records) / len(records), len(records))
