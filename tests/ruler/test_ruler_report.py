"""``coca-eval report`` renders RULER's tables from a run, and the gate pairs samples per task cell."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.gate import run_gate
from coca_eval.gate.options import make_options
from coca_eval.methods import make_method
from coca_eval.report import build_report, load_definition
from coca_eval.results import load_run
from coca_eval.ruler.params import make_ruler_params
from tests.ruler.scripted_backend import MODE

pytestmark = pytest.mark.usefixtures("scripted")


def _run(path, answer: str, samples: int = 8):
    MODE["answer"] = answer
    params = make_ruler_params({"tasks": "niah_single_1,niah_multiquery", "lengths": "1k,2k",
                                "samples": samples, "chat_template": "none"})  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    evaluate("ruler", [method], params, path, Runtime())
    return load_run(path)


def test_the_report_shows_rulers_tables(tmp_path):
    _run(tmp_path / "r.json", "planted")
    output = build_report([tmp_path / "r.json"], load_definition(None), ("md",), tmp_path / "report")
    titles = [t.title for t in output.tables]
    assert titles == ["RULER average score by length", "RULER scores of zoo by task and length"]
    summary, tasks = output.tables
    assert summary.columns == ["1k", "2k", "Effective (RULER)", "Effective (95 % bound)"]
    assert [e.text for e in summary.rows[0].entries] == ["100.0", "100.0", "2k", "<1k"]
    assert [r.label for r in tasks.rows] == [
        "niah_single_1",
        "niah_multiquery",
        "Average",
        "95 % lower bound",
    ]
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "Effective (95 % bound)" in markdown and "niah_multiquery" in markdown
    assert [stem for stem, _ in output.plots] == ["ruler_depth_heatmap_zoo"]


def test_the_heat_map_counts_every_needle_at_its_depth():
    from coca_eval.generation.heatmaps import depth_matrix, needles_by_task
    from coca_eval.results import Cell

    samples = [
        {"index": 0, "answers": ["1", "2"], "score": 0.5, "found": [True, False], "depths": [0.05, 0.95]},
        {"index": 1, "answers": ["3"], "score": 1.0, "found": [True], "depths": [0.9]},
    ]
    cell = Cell(task="ruler", method="m", metric="score", length=512, dataset="niah_multivalue", value=75.0,
                n=2, detail={"samples": samples})  # fmt: skip
    needles = needles_by_task([cell], "m")
    assert needles == {"niah_multivalue": [(512, 0.05, True), (512, 0.95, False), (512, 0.9, True)]}
    matrix = depth_matrix(needles["niah_multivalue"], [512], 2)
    assert matrix[0, 0] == 1.0 and matrix[1, 0] == 0.5


def test_the_gate_pairs_samples_per_task_cell(tmp_path):
    base, same, empty = (_run(tmp_path / f"{n}.json", a) for n, a in
                         (("base", "planted"), ("same", "planted"), ("empty", "empty")))  # fmt: skip
    options = make_options("2%", "5", 0.05, 0, 1000)
    assert run_gate([(base, same)], options).exit_code == 0
    failed = run_gate([(base, empty)], options)
    assert failed.exit_code == 1
    verdict = failed.cells[0]
    assert verdict.verdict == "regression" and verdict.units == 8
    assert verdict.result.effect == pytest.approx(100.0)  # points, the scale of the cells
