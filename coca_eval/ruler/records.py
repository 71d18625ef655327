"""RULER's reading of its cells' records (:mod:`coca_eval.generation.records`): the contradiction check
with RULER's scorer, and the keys a RULER run adds to its config."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from coca_eval.generation.records import scored_contradiction


def cell_contradiction(cell) -> str | None:
    """Why a finished RULER cell contradicts its own samples (a sample whose score or found references
    are not what its output earns, or a value or count that is not its samples'), or None. Read on
    every load, so a hand-edited or forged cell is refused instead of reported."""
    from coca_eval.ruler.scoring import score_sample
    from coca_eval.ruler.tasks import RULER_TASKS

    task = RULER_TASKS.get(cell.dataset) if cell.dataset in RULER_TASKS else None
    return scored_contradiction(cell, task, score_sample)


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
