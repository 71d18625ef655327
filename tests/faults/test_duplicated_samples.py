"""A sample held twice counts twice: in the cell's value, its n and its interval. Each import refuses
a sample met twice (RULER's index, lm-eval's row or doc_id, HELMET's id), and so does every reader of a
results file (``report``, ``gate``), naming the sample, in one line. Each case is one the import or the
report used to take, its n one more than the documents it holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.results import Cell, Run, save_run
from tests.imported.lm_eval_folders import copy_lm_eval_ruler

IMPORTED = Path(__file__).resolve().parent.parent / "imported" / "data"


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write_lines(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_import_ruler_refuses_an_index_met_twice(tmp_path, capsys):
    """niah_single_1 at 1k holds 3 predictions, all right (RULER's summary: 100); the first written
    again made the import keep 4 samples."""
    shutil.copytree(IMPORTED / "ruler", tmp_path / "ruler")
    path = tmp_path / "ruler" / "1024" / "pred" / "niah_single_1.jsonl"
    lines = _lines(path)
    assert len(lines) == 3
    _write_lines(path, [*lines, lines[0]])
    result = invoke(capsys, "import", "ruler", path.parent, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(path), f"sample {lines[0]['index']} appears twice")
    assert not (tmp_path / "out.json").exists()


def _samples_path(folder: Path, task: str) -> Path:
    return next(folder.glob(f"samples_{task}_*.jsonl"))


def test_import_lm_eval_refuses_a_row_written_twice(tmp_path, capsys):
    """ruler_vt at 1k: two documents scored 0.2 each; the first row written again made 3."""
    folder = copy_lm_eval_ruler(tmp_path)
    path = _samples_path(folder, "ruler_vt")
    lines = _lines(path)
    _write_lines(path, [lines[0], *lines])
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, path.name, f"doc {lines[0]['doc_id']} appears twice")
    assert not (tmp_path / "out.json").exists()


def test_import_lm_eval_refuses_a_doc_id_met_twice(tmp_path, capsys):
    """Two rows with one doc_id (their RULER indices differ, so no cell sees two indices)."""
    folder = copy_lm_eval_ruler(tmp_path)
    path = _samples_path(folder, "niah_single_1")
    lines = _lines(path)
    lines[1]["doc_id"] = lines[0]["doc_id"]
    _write_lines(path, lines)
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, path.name, f"doc {lines[0]['doc_id']} appears twice")


def test_import_lm_eval_refuses_a_ruler_index_met_twice_at_one_length(tmp_path, capsys):
    """Two documents of ruler_vt at 1k given one RULER index: one sample held twice in the cell."""
    folder = copy_lm_eval_ruler(tmp_path)
    path = _samples_path(folder, "ruler_vt")
    lines = _lines(path)
    at_1k = [x for x in lines if x["doc"]["max_length"] == 1024]
    at_1k[1]["doc"]["index"] = at_1k[0]["doc"]["index"]
    _write_lines(path, lines)
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, "ruler_vt at 1024", f"sample {at_1k[0]['doc']['index']} appears twice")


def test_import_lm_eval_keeps_one_doc_per_filter(tmp_path):
    """lm-eval writes a document once per filter: the same doc_id under two filters is two samples."""
    from coca_eval.imported.evaluation_harness import read_samples

    folder = copy_lm_eval_ruler(tmp_path)
    path = _samples_path(folder, "ruler_vt")
    lines = _lines(path)
    _write_lines(path, [*lines, *({**x, "filter": "strict"} for x in lines)])
    results = next(folder.glob("results_*.json"))
    assert len(read_samples(results, "ruler_vt")) == 2 * len(lines)


def test_import_helmet_refuses_an_id_met_twice(tmp_path, capsys):
    """kilt_nq's three answers are all wrong (0.0); q000's written again made 4 samples."""
    (source,) = (IMPORTED / "helmet").glob("kilt_nq_*.json")
    data = json.loads(source.read_text())
    assert [x["id"] for x in data["data"]] == ["q000", "q001", "q005"]
    data["data"].append(data["data"][0])
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    result = invoke(capsys, "import", "helmet", path, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, str(path), "sample id 'q000' appears twice")


def _doubled_cell(tmp_path: Path, capsys, command: list, dataset: str) -> tuple[Path, int]:
    """A results file written by an import, one cell's first sample written again (its n one more, its
    value still its samples' mean, so the file agrees with itself in every other way)."""
    out = tmp_path / "imported.json"
    assert invoke(capsys, *command, "--output", out).returncode == 0
    raw = json.loads(out.read_text())
    cell = next(c for c in raw["cells"] if c["dataset"] == dataset)
    samples = cell["detail"]["samples"]
    doubled = [*samples, samples[0]]
    cell["detail"]["samples"], cell["n"] = doubled, len(doubled)
    scores = [s.get("score", s.get("value")) for s in doubled]
    cell["value"] = sum(scores) / len(scores) * (100 if cell["task"] != "lm-eval" else 1)
    path = tmp_path / "doubled.json"
    path.write_text(json.dumps(raw))
    return path, samples[0]["index"]


CASES = {
    "ruler": (["import", "ruler", IMPORTED / "ruler" / "1024" / "pred"], "niah_single_1"),
    "helmet": (["import", "helmet", *sorted((IMPORTED / "helmet").glob("kilt_nq_*.json"))], "kilt_nq"),
    "lm-eval": (["import", "lm-eval", IMPORTED / "lm_eval_generation"], "capital_cities"),
}


@pytest.mark.parametrize("family", sorted(CASES))
@pytest.mark.parametrize("reader", ["report", "gate"])
def test_a_results_file_whose_cell_holds_one_sample_twice_is_refused(tmp_path, capsys, family, reader):
    command, dataset = CASES[family]
    path, index = _doubled_cell(tmp_path, capsys, command, dataset)
    if reader == "report":
        result = invoke(capsys, "report", path, "--out", tmp_path / "report", "--no-plots")
    else:
        result = invoke(capsys, "gate", "--baseline", tmp_path / "imported.json", "--candidate", path)
    assert_one_line_error(result, 2, str(path), f"sample {index} appears twice")
    assert not (tmp_path / "report").exists()


def test_a_ppl_cell_that_holds_one_document_twice_is_refused(tmp_path, capsys):
    doc = {"doc_id": "d0", "nll_sum": 3.0, "tokens": 2}
    cell = Cell(task="ppl", method="m", metric="ppl", length=512, value=4.0, detail={"docs": [doc, doc]})
    path = tmp_path / "ppl.json"
    save_run(Run(config={"task": "ppl", "params": {"dataset": "pg19"}}, cells=[cell]), path)
    result = invoke(capsys, "report", path, "--out", tmp_path / "report", "--no-plots")
    assert_one_line_error(result, 2, str(path), "document 'd0' appears twice")
