"""The values needles hold and the English word lists they and their keys are drawn from.

RULER takes its words from the ``wonderwords`` package's noun, adjective and verb lists: NIAH keys are
``adjective-noun`` pairs, the common-words task samples single words. The same lists are public
(MIT licence) in the ``wonderwords`` wheel on PyPI, so we read them from that exact wheel, pinned by
sha256 and cached like the embedded books, without installing or importing the package: the same
words RULER uses (its 3.0.1 lists: 6,782 nouns, 910 adjectives and 1,041 verbs once each), with no
word list of our own to maintain. Deriving a list from our public-domain books was the fallback; it
would differ from RULER's and carry archaic and proper nouns.
"""

from __future__ import annotations

import functools
import random
import uuid

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


def random_value(kind: str, rng: random.Random) -> str:
    """A needle's value of ``kind`` (RULER's ``numbers``: seven digits, ``words``: adjective-noun,
    ``uuids``: a version-4 UUID), drawn from ``rng``."""
    if kind == "numbers":
        return str(rng.randint(1_000_000, 9_999_999))
    if kind == "words":
        return f"{rng.choice(word_list('adjectives'))}-{rng.choice(word_list('nouns'))}"
    if kind == "uuids":
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    raise ValueError(f"unknown needle kind {kind!r}")
