"""The one rule every family applies to the references it reads: at least one must say something.

Answers are scored by finding a reference in them (RULER's case-insensitive substring test, HELMET's
exact and substring match after SQuAD's normalisation, BABILong's label check). A reference that is
empty, or that SQuAD's normalisation leaves empty (``""``, ``"."``, ``" the "``), is found in every
answer, so a sample whose references are all such scores full marks whatever the model wrote: the
cell would print 100 for a run that proved nothing. Such a sample is a fault in the file that holds it,
so it is refused where the file is read, in one line naming the file and the record, before any model
loads or any score is kept. SQuAD's normalisation is the strictest of the families' readings of an
answer (it drops most), so a reference it keeps is one every family's scorer has to look for.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from coca_eval.errors import CocaEvalError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize(text: str) -> str:
    """SQuAD's answer normalisation: lower case, punctuation dropped, the articles *a*, *an*, *the*
    dropped as words, whitespace collapsed (HELMET scores with it)."""
    lowered = text.lower()
    kept = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", kept).split())


def says_nothing(references: Sequence[str]) -> bool:
    """Whether no reference survives normalisation (no reference at all counts the same): any answer
    would then match the sample."""
    return not any(normalize(str(reference)) for reference in references)


def check_references(references: Sequence[str], where: str) -> None:
    """Refuse a sample none of whose ``references`` survives normalisation; ``where`` names the file
    and the record (``data.jsonl line 3``)."""
    if says_nothing(references):
        raise CocaEvalError(
            f"{where}: no reference is left after normalisation ({list(references)!r}); an empty "
            "reference matches any answer, so the sample cannot be scored"
        )
