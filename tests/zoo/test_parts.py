"""Books cut into evaluation parts: nothing lost, nothing reordered, every part long enough."""

from __future__ import annotations

import pytest

from coca_eval.data.documents import Document
from coca_eval.data.sources import check_source
from coca_eval.errors import CocaEvalError
from coca_eval.zoo.parts import book_parts


def _book(n_lines: int) -> Document:
    lines = [f"line {i} " + "word " * (i % 7) for i in range(n_lines)]
    return Document("b", "\n".join(lines), "Book", {"text_sha256": "x"})


def test_parts_cover_the_book_in_order_and_are_at_least_the_size():
    book = _book(500)
    parts = book_parts(book, chars=1000)
    assert "\n".join(p.text for p in parts) == book.text
    assert all(len(p.text) >= 999 for p in parts) and len(parts) > 3
    assert [p.doc_id for p in parts[:2]] == ["b#1", "b#2"] and parts[1].source["part"] == 2
    assert parts[0].source["text_sha256"] == "x"


def test_a_short_tail_joins_the_part_before_and_a_short_book_is_one_part():
    parts = book_parts(_book(500), chars=1000)
    assert len(parts[-1].text) >= 999
    (whole,) = book_parts(_book(3), chars=1000)
    assert whole.doc_id == "b#1" and whole.text == _book(3).text


def test_the_parts_form_is_a_known_dataset_and_other_forms_are_not():
    check_source("zoo:outside:parts")
    with pytest.raises(CocaEvalError, match="zoo:outside\\[:parts\\]"):
        check_source("zoo:outside:chapters")
