"""A sample whose every reference is empty after SQuAD's normalisation (``""``, ``"."``, ``" the "``) is
found in any answer, so it would score full marks whatever the model wrote. Each reader of references
refuses it in one line naming the file and the record: RULER's QA files, HELMET's data files,
BABILong's bAbI and prepared files, and the three imports (RULER, HELMET, lm-eval's RULER port). Each
import case is one the import used to take and print 100 for, its own scores made to agree with it."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.references import says_nothing

BLANK = ["", ".", " the ", "A", "an ...", " \t"]
IMPORTED = Path(__file__).resolve().parent.parent / "imported" / "data"


@pytest.mark.parametrize("reference", BLANK)
def test_references_that_normalise_to_nothing_say_nothing(reference):
    assert says_nothing([reference]) and says_nothing([reference, "the."])
    assert not says_nothing([reference, "Paris"])  # one real reference is enough
    assert not says_nothing(["0"]) and not says_nothing(["a1"]) and not says_nothing(["yes"])


def test_no_reference_at_all_says_nothing():
    assert says_nothing([])


def _squad(answers: list[str]) -> dict:
    para = {"context": "The otter swims.", "qas": [
        {"id": "0", "question": "Who swims?", "answers": [{"text": "otter", "answer_start": 4}]},
        {"id": "1", "question": "What swims?", "answers": [{"text": a, "answer_start": 0} for a in answers]},
    ]}  # fmt: skip
    return {"version": "v2.0", "data": [{"title": "A", "paragraphs": [para]}]}


@pytest.mark.parametrize("answers", [[""], [".", " the "]])
def test_a_squad_question_with_only_empty_answers_is_refused(tmp_path, answers):
    from coca_eval.ruler.qa_data import load_qa

    path = tmp_path / "dev.json"
    path.write_text(json.dumps(_squad(answers)), encoding="utf-8")
    with pytest.raises(CocaEvalError) as caught:
        load_qa("squad", str(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and "'What swims?'" in message, message


def test_a_squad_question_with_one_real_answer_and_unanswerable_ones_still_load(tmp_path):
    from coca_eval.ruler.qa_data import load_qa

    path = tmp_path / "dev.json"
    data = _squad(["", "the otter"])
    data["data"][0]["paragraphs"][0]["qas"].append(
        {"id": "2", "question": "Never said?", "answers": [], "is_impossible": True}
    )
    path.write_text(json.dumps(data), encoding="utf-8")
    assert [q.answers for q in load_qa("squad", str(path)).questions] == [("otter",), ("", "the otter")]


def test_a_hotpotqa_question_with_an_empty_answer_is_refused(tmp_path):
    from coca_eval.ruler.qa_data import load_qa

    row = {"question": "Who?", "answer": " . ", "context": [["T", ["The otter swims."]]]}
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({**row, "answer": "otter"}) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(CocaEvalError, match=r"rows.jsonl: record 1 \(question 'Who\?'\)"):
        load_qa("hotpotqa", str(path))


def _rewrite_line(path: Path, number: int, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[number - 1])
    change(row)
    lines[number - 1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("answers", [[""], [".", " the "]])
def test_a_helmet_rag_row_with_only_empty_answers_is_refused(tmp_path, answers):
    from coca_eval.helmet.data import QaRow, read_rows
    from tests.helmet.helmet_files import write_data_dir

    path = write_data_dir(tmp_path) / "kilt" / "nq-dev-multikilt_1000_k50_dep6.jsonl"
    _rewrite_line(path, 3, lambda row: row.update(answers=answers))
    with pytest.raises(CocaEvalError, match=rf"{path} line 3: no reference is left"):
        read_rows(str(path), QaRow)


@pytest.mark.parametrize(
    ("model", "row"),
    [
        ("KvRow", {"context": "c", "question": "q", "answer": "."}),
        ("RulerRow", {"context": "c", "outputs": [" the ", ""]}),
    ],
)
def test_a_helmet_recall_row_with_only_empty_references_is_refused(tmp_path, model, row):
    from coca_eval.helmet import recall_files
    from coca_eval.helmet.data import read_rows

    path = tmp_path / "validation_1024.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(CocaEvalError, match=rf"{path} line 1: no reference is left"):
        read_rows(str(path), getattr(recall_files, model))


def test_a_babi_question_with_an_empty_answer_is_refused():
    from coca_eval.babilong.babi import parse_babi

    text = "1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n3 Where is Mary?\t.\t1\n"
    with pytest.raises(CocaEvalError, match=r"qa1.txt line 3: no reference is left"):
        parse_babi(text, "qa1.txt")


def test_a_prepared_babilong_row_with_an_empty_target_is_refused(tmp_path):
    from coca_eval.babilong.data import babilong_rows

    path = tmp_path / "0k" / "qa1.jsonl"
    path.parent.mkdir()
    good = {"input": "Mary went to the kitchen.", "question": "Where is Mary?", "target": "kitchen"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "target": " "}) + "\n", encoding="utf-8")
    with pytest.raises(CocaEvalError, match=rf"{path} line 2: no reference is left"):
        babilong_rows("qa1", 0, str(tmp_path))


def test_import_ruler_of_blank_outputs_is_one_line_not_100(tmp_path, capsys):
    """Every vt prediction at 1k given the references ``[""]`` and RULER's summary made to agree (100):
    the import took it and printed 100 where the model scored 6.67."""
    shutil.copytree(IMPORTED / "ruler", tmp_path / "ruler")
    pred = tmp_path / "ruler" / "1024" / "pred"
    lines = [json.loads(x) for x in (pred / "vt.jsonl").read_text().splitlines() if x.strip()]
    (pred / "vt.jsonl").write_text("".join(json.dumps({**x, "outputs": [""]}) + "\n" for x in lines))
    rows = list(csv.reader((pred / "summary.csv").read_text().splitlines()))
    rows[2][rows[1].index("vt")] = "100.0"
    (pred / "summary.csv").write_text("\n".join(",".join(r) for r in rows) + "\n")
    result = invoke(capsys, "import", "ruler", pred, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(pred / "vt.jsonl"), f"index {lines[0]['index']}")
    assert not (tmp_path / "out.json").exists()


def test_import_helmet_of_blank_answers_is_one_line_not_100(tmp_path, capsys):
    """kilt_nq's three answers (all wrong, 0.0) given the references ``[".", " the "]`` and HELMET's
    metrics made to agree: the import took it and printed 100."""
    (source,) = (IMPORTED / "helmet").glob("kilt_nq_*.json")
    data = json.loads(source.read_text())
    for item in data["data"]:
        item.update(answer=[".", " the "], substring_exact_match=True)
    data["averaged_metrics"]["substring_exact_match"] = 100.0
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    result = invoke(capsys, "import", "helmet", path, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(path), "data[0]")
    assert not (tmp_path / "out.json").exists()


def test_import_lm_eval_of_blank_ruler_outputs_is_one_line_not_100(tmp_path, capsys):
    """lm-eval's ruler_vt at 1k (0.2) with every document's references ``[""]``, its scores and aggregate
    made to agree (1.0): the import took it and printed 100."""
    from tests.imported.lm_eval_folders import copy_lm_eval_ruler, rewrite_results, rewrite_samples

    folder = copy_lm_eval_ruler(tmp_path)

    def blank(sample: dict) -> dict:
        if sample["doc"]["max_length"] == 1024:
            sample["doc"]["outputs"], sample["1024"] = [""], 1.0
        return sample

    rewrite_samples(folder, "ruler_vt", blank)
    rewrite_results(folder, lambda r: r["results"]["ruler_vt"].update({"1024,none": 1.0}) or r)
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, "samples_ruler_vt_", "doc 0")
    assert not (tmp_path / "out.json").exists()


def test_a_results_file_whose_sample_has_only_empty_references_is_refused(tmp_path, capsys):
    """An import of RULER's predictions with one niah sample's references made ``[""]`` (its score 1 and
    found reference still what its output earns under them): ``report`` printed it."""
    out = tmp_path / "imported.json"
    assert (
        invoke(capsys, "import", "ruler", IMPORTED / "ruler" / "1024" / "pred", "--output", out).returncode
        == 0
    )
    raw = json.loads(out.read_text())
    cell = next(c for c in raw["cells"] if c["dataset"] == "niah_single_1")
    sample = cell["detail"]["samples"][1]
    assert sample["score"] == 1.0 and sample["found"] == [True]
    sample["answers"] = [""]
    path = tmp_path / "blank.json"
    path.write_text(json.dumps(raw))
    result = invoke(capsys, "report", path, "--out", tmp_path / "report", "--no-plots")
    assert_one_line_error(result, 2, str(path), f"sample {sample['index']} has no reference left")
    assert not (tmp_path / "report").exists()
