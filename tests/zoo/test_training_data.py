"""The zoo's data object: which books train the tokenizer and the model, and what zoo.json records."""

from __future__ import annotations

import pytest

from coca_eval.data.documents import Document
from coca_eval.zoo import training_data
from coca_eval.zoo.corpus import SPLIT_BOOKS
from coca_eval.zoo.training_data import ZooData


@pytest.fixture
def fake_books(monkeypatch):
    """Every split as short documents named after their books (no package is fetched)."""

    def load_split(split):
        return [
            Document(b, f"{b} " * 200 + "the end of the book.", b, {"text_sha256": f"sha-{b}"})
            for b in SPLIT_BOOKS[split]
        ]

    monkeypatch.setattr(training_data, "load_split", load_split)


@pytest.mark.parametrize("extra", [False, True])
def test_extra_books_join_the_training_text_and_the_record(fake_books, extra):
    data = ZooData.load(300, extra_books=extra)
    expected = [*SPLIT_BOOKS["train"], *(SPLIT_BOOKS["train-extra"] if extra else ())]
    assert [t.split()[0] for t in data.train_texts] == expected
    assert data.splits["train"] == expected
    assert set(data.book_hashes) == {*expected, *SPLIT_BOOKS["heldout"]}
    assert data.splits["heldout"] == list(SPLIT_BOOKS["heldout"])
    assert "train-extra" not in data.splits  # folded into train when used, else not trained on


def test_the_tokenizer_learns_from_the_extra_books_too(fake_books):
    plain, extra = ZooData.load(300), ZooData.load(300, extra_books=True)
    assert plain.tokenizer_sha256 != extra.tokenizer_sha256
