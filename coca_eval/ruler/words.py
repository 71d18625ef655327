"""The English word lists RULER draws keys and common words from.

RULER takes them from the ``wonderwords`` package's noun, adjective and verb lists: NIAH keys are
``adjective-noun`` pairs, the common-words task samples single words. The same lists are public
(MIT licence) in the ``wonderwords`` wheel on PyPI, so we read them from that exact wheel, pinned by
sha256 and cached like the embedded books, without installing or importing the package: the same
words RULER uses (its 3.0.1 lists: 6,782 nouns, 910 adjectives and 1,041 verbs once each), with no
word list of our own to maintain. Deriving a list from our public-domain books was the fallback; it
would differ from RULER's and carry archaic and proper nouns.

RULER switches cwe to a larger English word list when the lists run out (very long prompts); ours
extends them instead with the lower-case words of our embedded books, which are only needed then.
"""

from __future__ import annotations

import functools
import re

from coca_eval.archives import read_member
from coca_eval.assets import PypiFile, fetch_pypi_file

WONDERWORDS_WHEEL = PypiFile(
    "wonderwords",
    "3.0.1",
    "wonderwords-3.0.1-py3-none-any.whl",
    "4dd66deb6a76ca9e0b0422d1d3e111f9b910d7c16922d42de733ee8def98f8d0",
)


@functools.cache
def word_list(kind: str) -> tuple[str, ...]:
    """``nouns``, ``adjectives`` or ``verbs``: the wheel's list, blank lines and duplicates out, sorted."""
    member = {"nouns": "nounlist.txt", "adjectives": "adjectivelist.txt", "verbs": "verblist.txt"}[kind]
    raw = read_member(fetch_pypi_file(WONDERWORDS_WHEEL), f"wonderwords/assets/{member}")
    return tuple(sorted({line.strip() for line in raw.decode("utf-8").splitlines() if line.strip()}))


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
