"""The per-document record a perplexity cell keeps in ``detail["docs"]``: the gate bootstraps over
these, the report derives intervals and tokenizer-independent metrics (bits per byte, word perplexity)
from them, so their layout is a typed model rather than a convention."""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from coca_eval.ppl.positions import PositionBuckets

LN2 = math.log(2.0)
NLL_ROUNDING = 1e-3  # nats: how far below zero float rounding may take a token's NLL (a log-prob above 0)


class DocPart(BaseModel):
    """One document's NLL over its scored tokens; ``bytes`` and ``words`` (UTF-8 bytes and whitespace
    words of the document's kept text) are absent in ``coca-eval/1`` files, ``positions`` (the same
    NLL by position in the window, :mod:`coca_eval.ppl.positions`) in files of earlier versions and
    for a document without a finite sum.

    Strict, because parts also arrive from shard files and other ranks: a string, a NaN, a negative
    count or an NLL sum below zero is refused, never summed. ``tokens`` is always the number of scored
    tokens, whatever their scores were.
    """

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    doc_id: str
    nll_sum: float | None = Field(allow_inf_nan=False)  # None: infinite, or no number at all (error)
    tokens: int = Field(ge=1)
    bytes: int | None = Field(default=None, ge=0)
    words: int | None = Field(default=None, ge=0)
    error: str | None = None  # why the scores are no number (NaN, a log-prob above 0); nll_sum is None
    positions: PositionBuckets | None = None

    @model_validator(mode="after")
    def _a_probability(self) -> DocPart:
        if self.nll_sum is not None and self.nll_sum < -NLL_ROUNDING * self.tokens:
            raise ValueError(f"nll_sum {self.nll_sum} is below zero: a probability above 1")
        if self.error is not None and self.nll_sum is not None:
            raise ValueError("a document with an error has no nll_sum")
        if self.positions is not None and (
            self.nll_sum is None or not self.positions.agrees_with(self.nll_sum, self.tokens)
        ):
            raise ValueError("the position buckets do not add up to the document's nll_sum and tokens")
        return self


def score_problem(values: np.ndarray, positions: np.ndarray) -> str | None:
    """Why a document's token NLLs (at document ``positions``) are no number, or None when they are.

    NaN, an NLL of -inf or one below zero beyond rounding (a log-prob above 0) is not a probability at
    all: the cell is an ``error``. An NLL of +inf (zero probability for a token) is a true infinite
    perplexity: the cell is ``inf``, as it always was.
    """
    nan = np.isnan(values)
    bad = nan | (values < -NLL_ROUNDING)
    if not bad.any():
        return None
    first = int(np.argmax(bad))
    kinds = [f"{int(nan.sum())} NaN"] if nan.any() else []
    if (bad & ~nan).any():
        kinds.append(f"{int((bad & ~nan).sum())} with a log-prob above 0")
    return (
        f"{' and '.join(kinds)} of {values.size} scored tokens "
        f"(first at token {int(positions[first])}: NLL {float(values[first])})"
    )


def exp_or_inf(exponent: float) -> float:
    """``exp`` of a mean loss, inf from 700 nats on (float64 overflows at ~709.78, and ``math.exp``
    raises there instead of giving inf)."""
    return math.exp(exponent) if exponent < 700 else math.inf


def parts_of(detail: dict) -> list[DocPart]:
    return [DocPart.model_validate(part) for part in detail.get("docs") or []]


def bits_per_byte(parts: list[DocPart]) -> float | None:
    """lm-eval's ``bits_per_byte``: total NLL in bits over the documents' UTF-8 bytes."""
    if (
        not parts
        or any(p.bytes is None or p.nll_sum is None for p in parts)
        or not sum(p.bytes for p in parts)
    ):
        return None
    return sum(p.nll_sum for p in parts) / (LN2 * sum(p.bytes for p in parts))


def word_perplexity(parts: list[DocPart]) -> float | None:
    """lm-eval's ``word_perplexity``: ``exp(total NLL / total words)``."""
    if not parts or any(p.words is None or p.nll_sum is None for p in parts):
        return None
    if sum(p.words for p in parts) == 0:
        return None
    exponent = sum(p.nll_sum for p in parts) / sum(p.words for p in parts)
    return math.exp(exponent) if exponent < 700 else None
