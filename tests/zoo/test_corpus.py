"""The split is by whole book: no evaluation text is ever trained on."""

from __future__ import annotations

import os
import subprocess

import pytest

from coca_eval.data.books import EMBEDDED_BOOKS
from coca_eval.zoo.corpus import SPLIT_BOOKS, load_split
from coca_eval.zoo.debian_books import DEBIAN_BOOKS


def test_splits_are_disjoint_and_every_book_is_known():
    seen = [b for books in SPLIT_BOOKS.values() for b in books]
    assert len(seen) == len(set(seen))
    known = set(DEBIAN_BOOKS) | {b.doc_id for b in EMBEDDED_BOOKS}
    assert set(seen) <= known


def test_jane_austen_is_never_training_text():
    austen = {k for k, b in DEBIAN_BOOKS.items() if b.author == "Jane Austen"}
    assert len(austen) == 6
    assert austen == set(SPLIT_BOOKS["outside"])
    assert not austen & (set(SPLIT_BOOKS["train"]) | set(SPLIT_BOOKS["train-extra"]))


def _apt_knows(package: str) -> bool:
    """apt-get download needs package lists; a machine that never ran apt-get update has none."""
    if not os.path.exists("/usr/bin/apt-cache"):
        return False
    out = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True).stdout
    candidates = [line.split(":", 1)[1].strip() for line in out.splitlines() if "Candidate:" in line]
    return bool(candidates) and candidates[0] != "(none)"


@pytest.mark.slow
@pytest.mark.skipif(
    not all(
        _apt_knows(p)
        for p in (
            "r-cran-janeaustenr",
            "r-cran-tokenizers",
            "dict-devil",
            "sword-text-kjv",
            "sword-comm-tdavid",
            "sword-comm-mhcc",
            "sword-comm-scofield",
        )
    ),
    reason="the Debian packages are unknown to apt here (no apt-get, or apt-get update never ran)",
)
def test_every_split_loads_with_its_pinned_hashes():
    for split, books in SPLIT_BOOKS.items():
        docs = load_split(split)
        assert [d.doc_id for d in docs] == list(books)
        assert all(len(d.text.split()) > 20000 for d in docs)
