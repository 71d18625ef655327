"""The per-sample record a RULER cell keeps in ``detail["samples"]``: the gate pairs samples by
``index`` (and checks their references), the report bins NIAH samples by needle depth."""

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
        """Every reference found (string_match_all) or one found (string_match_part)."""
        return self.score == 1.0


def records_of(detail: dict) -> list[SampleRecord]:
    return [SampleRecord.model_validate(sample) for sample in detail.get("samples") or []]
