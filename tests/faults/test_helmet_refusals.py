"""HELMET's inputs that cannot be scored are one line naming the file and the row, exit 2, before any
model loads: an ICL label outside the task's label list (past its end the prompt builder failed with
an ``IndexError`` traceback; a negative one was read from the end of the question's label mapping and
the run went on, the row silently given the last label's meaning), and a RAG row or an imported HELMET
answer with no reference at all (``answers: []``: ``best_f1`` would take the max of nothing). A RAG
question no passage answers is not refused (HELMET keeps those its retriever missed): the run records
how many it holds and prints it once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from tests.helmet.helmet_files import write_data_dir, write_icl_dir
from tests.ruler.conftest import scripted  # noqa: F401  (the runs' backend)

IMPORTED = Path(__file__).resolve().parent.parent / "imported" / "data"
RUN = ("helmet", "--model", "zoo-rope", "--backend", "scripted", "--samples", "2", "--lengths", "1500")


def _relabel(path: Path, row: int, field: str, label: int) -> None:
    """Row ``row`` (1-based) of a JSON-lines file given ``label``."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows[row - 1][field] = label
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("label", [6, 17, -1], ids=["one-past", "far-past", "negative"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_an_icl_label_outside_the_label_list_is_one_line(tmp_path, capsys, scripted, split, label):  # noqa: F811
    """TREC coarse has six labels, 0 to 5: 6 and 17 are past the list, -1 before it."""
    data = write_icl_dir(tmp_path / "data")
    path = data / "icl" / "icl_trec_coarse" / f"{split}.jsonl"
    _relabel(path, 3, "coarse_label", label)
    out = tmp_path / "out.json"
    result = invoke(capsys, *RUN, "--tasks", "icl_trec_coarse", "--data", data, "--output", out)
    assert_one_line_error(
        result, 2, f"{path} row 3: coarse_label {label} is not one of the task's 6 labels (0 to 5)"
    )
    assert not out.exists()


def test_icl_labels_at_both_ends_of_the_list_still_load(tmp_path):
    from coca_eval.helmet.icl import load_icl_set

    data = write_icl_dir(tmp_path / "data")
    train = data / "icl" / "icl_trec_coarse" / "train.jsonl"
    _relabel(train, 1, "coarse_label", 0)
    _relabel(train, 2, "coarse_label", 5)
    loaded = load_icl_set("icl_trec_coarse", str(data), 4, 7)
    assert [e.label for e in loaded.train[:2]] == [0, 5]


def test_a_rag_row_with_no_answers_at_all_is_one_line(tmp_path, capsys, scripted):  # noqa: F811
    data = write_data_dir(tmp_path / "data")
    path = data / "kilt" / "nq-dev-multikilt_1000_k440_dep6.jsonl"
    _relabel(path, 2, "answers", [])
    out = tmp_path / "out.json"
    result = invoke(capsys, *RUN, "--tasks", "kilt_nq", "--data", data, "--output", out)
    assert_one_line_error(result, 2, f"{path} line 2: no reference is left")
    assert not out.exists()


@pytest.mark.parametrize("answer", [[], [[]]], ids=["empty", "empty-group"])
def test_import_helmet_of_an_answer_list_holding_nothing_is_one_line(tmp_path, capsys, answer):
    (source,) = (IMPORTED / "helmet").glob("kilt_nq_*.json")
    data = json.loads(source.read_text())
    data["data"][1]["answer"] = answer
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    result = invoke(capsys, "import", "helmet", path, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, f"{path}: data[1]", "no reference is left")
    assert not (tmp_path / "out.json").exists()


def test_import_ruler_of_outputs_holding_nothing_is_one_line(tmp_path, capsys):
    import shutil

    shutil.copytree(IMPORTED / "ruler", tmp_path / "ruler")
    pred = tmp_path / "ruler" / "1024" / "pred"
    lines = [json.loads(x) for x in (pred / "vt.jsonl").read_text().splitlines() if x.strip()]
    lines[1]["outputs"] = []
    (pred / "vt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = invoke(capsys, "import", "ruler", pred, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, f"{pred / 'vt.jsonl'} index {lines[1]['index']}", "no reference")
    assert not (tmp_path / "out.json").exists()


def _unanswer(row: dict, how: str) -> None:
    """No passage of ``row`` answers: every passage marked not gold, or every passage's text emptied."""
    for passage in row["ctxs"]:
        if how == "none gold":
            passage["has_answer"] = False
        else:
            passage["text"] = ""


@pytest.mark.parametrize("how", ["none gold", "all empty"])
def test_a_row_no_passage_answers_is_answerless(how):
    from coca_eval.helmet.data import QaRow
    from coca_eval.helmet.rag import answerless

    passages = [{"title": "A", "text": "The keeper of Lo is Mi Ka.", "has_answer": True}, {"text": "Su ta."}]
    row = {"question": "who keeps Lo?", "answers": ["Mi Ka"], "ctxs": passages}
    assert not answerless(QaRow.model_validate(row))
    _unanswer(row, how)
    assert answerless(QaRow.model_validate(row))


def test_a_run_says_how_many_rag_questions_no_passage_answers(tmp_path, capsys, scripted):  # noqa: F811
    """Two of the file's eight questions lose every gold passage: the run (all eight asked) records 2 of
    8 in its config and prints it once, under the summary."""
    data = write_data_dir(tmp_path / "data")
    path = data / "kilt" / "nq-dev-multikilt_1000_k440_dep6.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in (rows[1], rows[4]):
        _unanswer(row, "none gold")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.json"
    args = ("--tasks", "kilt_nq", "--samples", "8", "--data", data, "--output", out)
    result = invoke(capsys, *RUN[:5], "--lengths", "1500", *args)
    assert result.returncode == 0, result.stderr[-2000:]
    saved = json.loads(out.read_text())
    assert saved["config"]["rag_answerless"] == {
        "kilt_nq": [{"passages": 440, "questions": 8, "answerless": 2}]
    }
    said = "kilt_nq: 2 of 8 (k = 440) questions have no passage holding an answer"
    assert result.stdout.count(said) == 1, result.stdout


def test_a_run_whose_passages_all_answer_prints_no_such_note(tmp_path, capsys, scripted):  # noqa: F811
    out = tmp_path / "out.json"
    args = ("--tasks", "kilt_nq", "--data", write_data_dir(tmp_path / "data"), "--output", out)
    result = invoke(capsys, *RUN, *args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(out.read_text())["config"]["rag_answerless"]["kilt_nq"][0]["answerless"] == 0
    assert "no passage holding an answer" not in result.stdout
