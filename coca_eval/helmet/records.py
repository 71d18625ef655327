"""A HELMET cell's per-sample records are the base's (:class:`coca_eval.generation.records.SampleRecord`:
index, references, score in [0, 1], output, the gold unit's depth), checked against HELMET's scorer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt


def cell_contradiction(cell) -> str | None:
    """Why a finished HELMET cell contradicts its own samples, or None (read on every load)."""
    from coca_eval.generation.records import scored_contradiction
    from coca_eval.helmet.scoring import score_answer
    from coca_eval.helmet.tasks import HELMET_TASKS

    task = HELMET_TASKS.get(cell.dataset) if cell.dataset in HELMET_TASKS else None
    return scored_contradiction(cell, task, score_answer)


class EffectiveLengthRecord(BaseModel):
    """``config.effective_length``: the run's ``--share`` (%) and, per method and category, what was
    read at it."""

    model_config = ConfigDict(extra="allow")

    share: StrictFloat | StrictInt = Field(gt=0, le=100)
    methods: dict[str, dict] | None = None


class AnswerlessRecord(BaseModel):
    """``config.rag_answerless[task]``: one HELMET file a RAG task read (``passages`` per question), its
    chosen questions, and how many of them no passage answers."""

    passages: StrictInt = Field(gt=0)
    questions: StrictInt = Field(ge=0)
    answerless: StrictInt = Field(ge=0)


class HelmetConfig(BaseModel):
    """The keys a HELMET run adds to its config, typed (the rest are the results schema's)."""

    model_config = ConfigDict(extra="allow")

    effective_length: EffectiveLengthRecord | None = None
    rag_answerless: dict[str, list[AnswerlessRecord]] | None = None
