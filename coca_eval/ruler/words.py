"""The word pool RULER's common-words task samples from: the base's English word lists
(:mod:`coca_eval.generation.values`) together.

RULER switches cwe to a larger English word list when the lists run out (very long prompts); ours
extends them instead with the lower-case words of our embedded books, which are only needed then.
"""

from __future__ import annotations

import functools
import re

from coca_eval.generation.values import word_list


@functools.cache
def common_word_pool() -> tuple[str, ...]:
    """RULER's pool for cwe: nouns, adjectives and verbs together, each once, sorted."""
    return tuple(sorted({*word_list("nouns"), *word_list("adjectives"), *word_list("verbs")}))


@functools.cache
def book_words() -> tuple[str, ...]:
    """Lower-case words of the embedded books not already in the cwe pool (for very long cwe prompts)."""
    from coca_eval.data.books import load_embedded_books

    pool = set(common_word_pool())
    found = {w for doc in load_embedded_books() for w in re.findall(r"\b[a-z]{3,}\b", doc.text)}
    return tuple(sorted(found - pool))
