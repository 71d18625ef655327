"""The per-document record a LongPPL cell keeps in ``detail["docs"]``, apart from the code that makes it
(which needs torch): the report's interval and the gate's paired test read these records only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from coca_eval.results import Cell

SELF_JUDGED = "the evaluated model"  # a cell's ``evaluator`` when no --evaluator-model judged its key tokens


class LongPplPart(BaseModel):
    """One document's record: its key spans and the evaluated model's NLL on its key and all tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    doc_id: str
    text_sha: str  # the text the spans are offsets into
    spans: list[list[int]]  # [start, end) character offsets
    key_tokens: int = Field(ge=0)
    key_nll_sum: float | None = Field(allow_inf_nan=False)  # None: infinite, or an error
    tokens: int = Field(ge=1)
    nll_sum: float | None = Field(allow_inf_nan=False)
    error: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> LongPplPart:
        check_spans(self.spans)
        if self.key_tokens > self.tokens:
            raise ValueError(f"{self.key_tokens} key tokens of {self.tokens} scored tokens")
        if self.error is not None and (self.nll_sum is not None or self.key_nll_sum is not None):
            raise ValueError("a document with an error has no NLL sums")
        return self


def check_spans(spans: list[list[int]]) -> None:
    if any(len(s) != 2 or not 0 <= s[0] <= s[1] for s in spans):
        raise ValueError("a key span is not [start, end] with 0 <= start <= end")


class KeySpans(BaseModel):
    """What ``--key-tokens`` takes from a document's record: its key spans and the text they are offsets
    into. The scores beside them are not read, so a record whose NLL is damaged still lends its spans."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    doc_id: str
    text_sha: str
    spans: list[list[int]]

    @model_validator(mode="after")
    def _valid(self) -> KeySpans:
        check_spans(self.spans)
        return self


def longppl_parts(cell: Cell) -> list[LongPplPart]:
    """A cell's document records, typed (a damaged one raises pydantic's ValidationError, which a
    results file's loader turns into one line naming the file)."""
    return [LongPplPart.model_validate(part) for part in cell.detail.get("docs") or []]


def judged_by_itself(cell: Cell) -> bool:
    """Whether the cell's key tokens were judged by the very model it scores (neither an evaluator nor a
    ``--key-tokens`` file chose them)."""
    return cell.detail.get("key_tokens_from") is None and cell.detail.get("evaluator") == SELF_JUDGED
