"""The per-sample record a RULER cell keeps in ``detail["samples"]``: the gate pairs samples by
``index`` (and checks their references), the report bins NIAH samples by needle depth."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt


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
        """Every reference found (string_match_all) or one found (string_match_part)."""
        return self.score == 1.0


def records_of(detail: dict) -> list[SampleRecord]:
    return [SampleRecord.model_validate(sample) for sample in detail.get("samples") or []]


def cell_contradiction(cell) -> str | None:
    """Why a finished RULER cell contradicts its own samples (a sample whose score or found references
    are not what its output earns, or a value or count that is not its samples'), or None. Read on
    every load, so a hand-edited or forged cell is refused instead of reported."""
    from coca_eval.ruler.scoring import score_sample
    from coca_eval.ruler.tasks import RULER_TASKS

    task = RULER_TASKS.get(cell.dataset) if cell.dataset in RULER_TASKS else None
    return scored_contradiction(cell, task, score_sample)


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


class EffectiveLengthRecord(BaseModel):
    """``config.effective_length``: the run's ``--threshold`` (a score, 0-100) and, per method, what was
    read at it. The gate reads the threshold from here, so a forged one is refused on load."""

    model_config = ConfigDict(extra="allow")

    threshold: StrictFloat | StrictInt = Field(ge=0, le=100)
    methods: dict[str, dict] | None = None


class RulerConfig(BaseModel):
    """The keys a RULER run adds to its config, typed (the rest are the results schema's)."""

    model_config = ConfigDict(extra="allow")

    effective_length: EffectiveLengthRecord | None = None
