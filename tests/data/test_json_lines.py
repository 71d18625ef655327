"""The one JSON-lines reader: published rows name a bad row from 0, HELMET's local ICL sets a bad line
from 1, both skipping blank lines."""

from __future__ import annotations

import pytest

from coca_eval.data.published_rows import file_rows, json_lines
from coca_eval.errors import CocaEvalError
from coca_eval.helmet.icl import IclSource, load_split_rows


def test_blank_lines_are_skipped_and_values_kept_in_order():
    assert json_lines('{"a": 1}\n\n  \n[2]\n', "f.jsonl") == [{"a": 1}, [2]]


def test_a_published_row_is_named_from_zero_and_an_editor_line_from_one(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{not json\n', encoding="utf-8")
    with pytest.raises(CocaEvalError, match=r"rows\.jsonl row 1: not JSON \(Expecting property name"):
        file_rows(path)
    with pytest.raises(CocaEvalError, match=r"rows\.jsonl line 2: Expecting property name"):
        json_lines(path.read_text(encoding="utf-8"), path, by_line=True)


def test_helmets_local_icl_set_names_the_bad_line_from_one(tmp_path):
    folder = tmp_path / "icl" / "banking77"
    folder.mkdir(parents=True)
    (folder / "train.jsonl").write_text('{"text": "t", "label": 0}\n\n{"text": \n', encoding="utf-8")
    source = IclSource("hub/id", None, "train", None, "label", 2)
    with pytest.raises(CocaEvalError, match=r"train\.jsonl line 3: Expecting value"):
        load_split_rows(source, str(tmp_path), "banking77")
