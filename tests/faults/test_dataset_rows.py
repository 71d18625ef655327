"""Item 17: a row whose text is null (or a number) is refused, never scored as the string "None"."""

from __future__ import annotations

import json

import pytest

from coca_eval.data.sources import load_documents
from coca_eval.errors import CocaEvalError


@pytest.mark.parametrize(("value", "shown"), [(None, "null"), (5, "int"), (["a"], "list")])
def test_jsonl_row_without_text_is_refused(tmp_path, value, shown):
    path = tmp_path / "books.jsonl"
    path.write_text(json.dumps({"text": "fine"}) + "\n" + json.dumps({"text": value}) + "\n")
    with pytest.raises(CocaEvalError, match=rf"books.jsonl row 2: field 'text' is {shown}, not text"):
        load_documents(str(path))


def test_text_rows_still_load(tmp_path):
    path = tmp_path / "books.jsonl"
    path.write_text(json.dumps({"text": "one"}) + "\n" + json.dumps({"text": "two"}) + "\n")
    assert [d.text for d in load_documents(str(path))] == ["one", "two"]
