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


FILLERS = {
    "plain": "John went to the hallway.",  # 13 tokens of the zoo's tokenizer
    "long": "John went to the hallway behind the old stone kitchen of the house that stands by the river.",
    "short": "Bo ran.",  # 6 tokens: 205 of them and the template fit 2000 tokens
}


def _story(facts: int, room: str, filler: str = "plain") -> str:
    """A qa1 story: Mary goes to ``room``, then ``facts - 1`` facts of ``filler``; where is Mary?"""
    lines = [f"1 Mary went to the {room}."] + [f"{i} {FILLERS[filler]}" for i in range(2, facts + 1)]
    return "\n".join([*lines, f"{facts + 1} Where is Mary?\t{room}\t1"]) + "\n"


def _cell(tmp_path, stories: list[str], samples: int):
    babi = tmp_path / "babi"
    babi.mkdir()
    (babi / "qa1_single-supporting-fact_test.txt").write_text("".join(stories), encoding="utf-8")
    values = {"tasks": "qa1", "lengths": "2000", "samples": samples, "seed": 3, "babi_data": str(babi)}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    (cell,) = evaluate(
        "babilong", [method], make_babilong_params(values), tmp_path / "r.json", Runtime()
    ).cells
    return cell


# BABILong's line limit at its length of the same name as our 2000 tokens: 2000 x 1000 / 1024 = 1953 of
# its tokens, less 300 for the prompt, one line per 8 tokens: 206 lines (facts and the question)
LIMIT_AT_2000 = (1953 - 300) // 8


def test_a_story_too_long_for_the_length_is_skipped_and_counted(tmp_path):
    """Story 2 holds 150 long facts: within BABILong's 206 lines, but more than 2000 tokens hold. The
    cell asks for every question that fits, so it meets story 2 whatever the draw's order, skips it and
    counts it."""
    stories = [
        _story(2, "kitchen"),
        _story(150, "office", filler="long"),
        _story(3, "garden"),
        _story(2, "bedroom"),
    ]
    cell = _cell(tmp_path, stories, 3)
    assert cell.status == "ok" and cell.n == 3 and cell.value == 100.0
    assert cell.detail["skipped_stories"] == 1 and "over_line_limit" not in cell.detail
    samples = cell.detail["samples"]
    assert [s["index"] for s in samples] == [0, 1, 2]
    drawn = {s["answers"][0]: (s["facts"], s["story"]) for s in samples}
    assert drawn == {"kitchen": (2, 0), "garden": (3, 2), "bedroom": (2, 3)}


def test_a_question_over_babilongs_line_limit_is_never_drawn_and_is_counted(tmp_path):
    """At 2000 tokens a question of 205 facts (206 lines) may be drawn, one of 206 facts (207 lines) not
    (BABILong's ``slc.shape[0] <= max_n_facts``); both are short enough in tokens to fit otherwise."""
    assert LIMIT_AT_2000 == 206
    stories = [_story(2, "kitchen"), _story(206, "office", "short"), _story(205, "garden", "short")]
    stories.append(_story(3, "bedroom"))
    cell = _cell(tmp_path, stories, 3)
    assert cell.status == "ok" and cell.detail["over_line_limit"] == 1
    assert "skipped_stories" not in cell.detail
    assert sorted(s["answers"][0] for s in cell.detail["samples"]) == ["bedroom", "garden", "kitchen"]


def test_too_few_stories_that_fit_is_an_error_cell_saying_how_many_do_and_why(tmp_path):
    stories = [_story(2, "kitchen"), _story(300, "office"), _story(150, "garden", filler="long")]
    cell = _cell(tmp_path, stories, 2)
    assert cell.status == "error"
    assert (
        "1 of its 3 bAbI samples fit (1 have more than BABILong's 206 lines at this length, 1 more facts "
        "than the length holds); ask for at most 1 --samples"
    ) in cell.detail["error"]
