"""The per-document record a perplexity cell keeps in ``detail["docs"]``: the gate bootstraps over
these, the report derives intervals and tokenizer-independent metrics (bits per byte, word perplexity)
from them, so their layout is a typed model rather than a convention."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

LN2 = math.log(2.0)


class DocPart(BaseModel):
    """One document's NLL over its scored tokens; ``bytes`` and ``words`` (UTF-8 bytes and whitespace
    words of the document's kept text) are absent in ``coca-eval/1`` files."""

    model_config = ConfigDict(extra="allow", frozen=True)

    doc_id: str
    nll_sum: float | None  # None: infinite (a token had zero probability)
    tokens: int
    bytes: int | None = None
    words: int | None = None


def parts_of(detail: dict) -> list[DocPart]:
    return [DocPart.model_validate(part) for part in detail.get("docs") or []]


def bits_per_byte(parts: list[DocPart]) -> float | None:
    """lm-eval's ``bits_per_byte``: total NLL in bits over the documents' UTF-8 bytes."""
    if not parts or any(p.bytes is None or p.nll_sum is None for p in parts):
        return None
    return sum(p.nll_sum for p in parts) / (LN2 * sum(p.bytes for p in parts))


def word_perplexity(parts: list[DocPart]) -> float | None:
    """lm-eval's ``word_perplexity``: ``exp(total NLL / total words)``."""
    if not parts or any(p.words is None or p.nll_sum is None for p in parts):
        return None
    exponent = sum(p.nll_sum for p in parts) / sum(p.words for p in parts)
    return math.exp(exponent) if exponent < 700 else None
