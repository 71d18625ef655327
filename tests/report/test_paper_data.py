"""The shipped paper tables: inside the package (found after a non-editable install), read verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

import coca_eval
from coca_eval.errors import CocaEvalError
from coca_eval.paper import PAPER_TABLES, paper_rows, tables_dir


def test_every_table_ships_inside_the_package():
    assert tables_dir() == Path(coca_eval.__file__).parent / "paper" / "tables"
    for key, spec in PAPER_TABLES.items():
        assert (tables_dir() / spec.file).is_file(), key
        assert paper_rows(key), key


def test_table1_keeps_the_printed_text_and_groups():
    rows = paper_rows("table1")
    assert len(rows) == 9 and rows[0].label == "ALibi" and rows[0].group == "Training from scratch"
    assert rows[0].values["16384"] == "OOM" and rows[1].values["32768"] == "inf"
    assert rows[5].values == {
        "512": "9.25", "1024": "7.56", "2048": "7.30", "4096": "9673.14", "8192": "inf", "16384": "inf",
        "32768": "inf",
    }  # fmt: skip


def test_mixed_tables_are_split_by_task():
    ppl, passkey = paper_rows("table3", "ppl"), paper_rows("table3", "passkey")
    assert len(ppl) == len(passkey) == 6
    assert ppl[1].label == "CoCA-Strict (delta vs Slack)" and ppl[1].group == "dynamic NTK x2"
    assert ppl[1].values["8192"] == "+15.37"  # perplexity as printed; passkey's 0.99 in points
    assert (passkey[0].values["1024"], passkey[1].values["2048"], passkey[1].values["512"]) == (
        "99",
        "-30",
        "+0",
    )
    assert [r.label for r in paper_rows("table4", "passkey")] == ["LLaMA-7B + PI", "LLaMA-7B + CoCA & PI"]


def test_unknown_table():
    with pytest.raises(CocaEvalError, match="unknown paper table"):
        paper_rows("table7")
