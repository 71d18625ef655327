"""The per-sample record a passkey cell keeps in ``detail["samples"]``: the gate pairs samples by
``index`` (and checks key and depth), the report bins them by depth and distance."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SampleRecord(BaseModel):
    """One prompt: its key and where it sat, what the model answered and whether that was right.

    The gate and the plots need ``index, key, depth, distance, correct``; the rest is for people (and
    may be missing in a file another tool wrote). Unknown keys are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    index: int
    key: int
    depth: float  # requested depth, fraction of the filler before the key line
    distance: int  # tokens from the key line to the end of the prompt
    correct: bool  # the landmark rule: the first integer of the output is the key
    key_position: float | None = None  # where the key line starts, fraction of the prompt
    output: str | None = None
    substring: bool | None = None  # the key appears anywhere in the output


def records_of(detail: dict) -> list[SampleRecord]:
    return [SampleRecord.model_validate(sample) for sample in detail.get("samples") or []]


def cell_contradiction(cell) -> str | None:
    """Why a finished passkey cell contradicts its own samples (a sample scored otherwise than its
    output earns, or a value or count that is not its samples'), or None. Read on every load, so a
    hand-edited or forged cell is refused instead of reported."""
    from coca_eval.passkey.answer import score_output
    from coca_eval.results import value_mismatch

    records = records_of(cell.detail)
    if cell.status != "ok" or not records:
        return None
    for record in records:
        if record.output is not None and score_output(record.output, record.key)["correct"] != record.correct:
            return f"sample {record.index} is scored {record.correct} but its output {record.output!r} is not"
    accuracy = 100 * sum(r.correct for r in records) / len(records)  # points
    return value_mismatch(cell, accuracy, len(records))
