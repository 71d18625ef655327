"""What a BABILong length holds, from either source.

BABILong's ``Nk`` is N x 1000 GPT-2 tokens with 300 kept for the prompt (``data/create_tasks.py`` at
7a6efee, l. 27-35), and it drops from a length the stories with more than (length - 300) / 8 lines
(l. 51-52, ``get_dataset_df`` l. 55-56). A prepared row far longer than its name is refused; a bAbI
story whose facts overfill N under ``generate`` is skipped and counted, not an error cell.
"""

from __future__ import annotations

import json

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.babilong.data import babilong_rows
from coca_eval.babilong.params import make_babilong_params
from coca_eval.methods import make_method
from tests.ruler.test_ruler_cli import _cli

pytestmark = pytest.mark.usefixtures("scripted")
ONE_K = 1000  # BABILong's "1k": 1000 tokens (create_tasks.py l. 27-28)


def _row(words: int, room: str = "kitchen") -> dict:
    noise = " ".join(["noise"] * (words - 5))
    return {"input": f"{noise} Mary went to the {room}.", "question": "Where is Mary?", "target": room}


def _prepared(tmp_path, rows: list[dict]):
    path = tmp_path / "data" / "1k" / "qa1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_1k_row_over_twice_1000_tokens_is_refused_in_one_line_naming_file_and_row(tmp_path, capsys):
    path = _prepared(tmp_path, [_row(300), _row(2 * ONE_K + 1, "garden")])
    code, _, err = _cli(
        capsys, "babilong", "--model", "zoo-rope", "--backend", "scripted", "--source", "babilong",
        "--data", str(tmp_path / "data"), "--tasks", "qa1", "--lengths", "1k", "--samples", "2",
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path} line 2" in err and "over twice BABILong's 1k" in err


def test_a_row_up_to_twice_its_length_is_read(tmp_path):
    _prepared(tmp_path, [_row(300), _row(2 * ONE_K, "garden")])
    rows = babilong_rows("qa1", 1024, str(tmp_path / "data"))
    assert [r.target for r in rows] == ["kitchen", "garden"]


def test_the_facts_only_0k_set_is_not_held_to_a_length(tmp_path):
    path = tmp_path / "data" / "0k" / "qa1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_row(3000)) + "\n", encoding="utf-8")
    assert len(babilong_rows("qa1", 0, str(tmp_path / "data"))) == 1


def _story(facts: int, room: str) -> str:
    """A qa1 story: Mary goes to ``room``, John to the hallway ``facts - 1`` times, where is Mary?"""
    lines = [f"1 Mary went to the {room}."] + [f"{i} John went to the hallway." for i in range(2, facts + 1)]
    return "\n".join([*lines, f"{facts + 1} Where is Mary?\t{room}\t1"]) + "\n"


def test_a_story_too_long_for_the_length_is_skipped_and_counted(tmp_path):
    """Story 2 holds 300 facts, more than 2000 tokens hold; the cell takes stories 1, 3 and 4."""
    babi = tmp_path / "babi"
    babi.mkdir()
    stories = [_story(2, "kitchen"), _story(300, "office"), _story(3, "garden"), _story(2, "bedroom")]
    (babi / "qa1_single-supporting-fact_test.txt").write_text("".join(stories), encoding="utf-8")
    values = {"tasks": "qa1", "lengths": "2000", "samples": 3, "seed": 3, "babi_data": str(babi)}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    (cell,) = evaluate(
        "babilong", [method], make_babilong_params(values), tmp_path / "r.json", Runtime()
    ).cells
    assert cell.status == "ok" and cell.n == 3 and cell.value == 100.0
    assert cell.detail["skipped_stories"] == 1
    samples = cell.detail["samples"]
    assert [s["index"] for s in samples] == [0, 1, 2]
    assert [s["answers"] for s in samples] == [["kitchen"], ["garden"], ["bedroom"]]
    assert [s["facts"] for s in samples] == [2, 3, 2]


def test_too_few_stories_that_fit_is_an_error_cell_saying_how_many_do(tmp_path):
    babi = tmp_path / "babi"
    babi.mkdir()
    stories = [_story(2, "kitchen"), _story(300, "office")]
    (babi / "qa1_single-supporting-fact_test.txt").write_text("".join(stories), encoding="utf-8")
    values = {"tasks": "qa1", "lengths": "2000", "samples": 2, "seed": 3, "babi_data": str(babi)}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    (cell,) = evaluate(
        "babilong", [method], make_babilong_params(values), tmp_path / "r.json", Runtime()
    ).cells
    assert cell.status == "error" and "1 of its 2 bAbI samples fit (1 have more facts" in cell.detail["error"]
