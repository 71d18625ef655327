"""Item 8: names inside a results file never choose where the report writes."""

from __future__ import annotations

import re

import pytest
from test_gate_cli import invoke

from coca_eval.report.layout import safe_stem
from coca_eval.results import Cell, Run, save_run


def _run_file(tmp_path, task: str, method: str, *datasets: str):
    path = tmp_path / "inputs" / "run.json"
    cells = [
        Cell(task=task, method=method, metric="ppl", length=n, dataset=dataset, value=5.0 + n / 512)
        for dataset in datasets
        for n in (512, 1024)
    ]
    save_run(Run(config={"task": task}, cells=cells), path)
    return path


@pytest.mark.parametrize(
    ("task", "method", "dataset"),
    [("../../escaped", "m", "pg19"), ("/tmp/coca-eval-escaped", "m", "d"), ("ppl", "../m", "../../../d")],
)
def test_hostile_names_stay_inside_out(tmp_path, capsys, task, method, dataset):
    run = _run_file(tmp_path, task, method, dataset)
    before = {p for p in tmp_path.rglob("*")}
    out = tmp_path / "deep" / "out"
    args = ["--format", "md", "--format", "latex", "--format", "csv"]
    result = invoke(capsys, "report", run, "--out", out, *args)
    assert result.returncode == 0, result.stderr
    created = {p for p in tmp_path.rglob("*")} - before
    assert created and all(p == out.parent or out in (p, *p.parents) for p in created), created
    latex = "".join(p.read_text() for p in out.glob("*.tex"))
    names = re.findall(r"\\(?:input|label|includegraphics)(?:\[[^]]*\])?\{([^}]*)\}", latex)
    assert names and all(re.fullmatch(r"(tab:|plots/)?[A-Za-z0-9_-][A-Za-z0-9._-]*", n) for n in names), names


def test_hub_dataset_name_draws_its_plot(tmp_path, capsys):
    run = _run_file(tmp_path, "ppl", "m", "hf:org/name", "pg19")  # a plot per dataset, named by it
    result = invoke(capsys, "report", run, "--out", tmp_path / "out")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert list((tmp_path / "out" / "plots").glob("*hf_org_name*.png"))


def test_safe_stem_keeps_plain_names_and_is_idempotent():
    assert safe_stem("ppl_vs_length") == "ppl_vs_length"
    for hostile in ("../../x", "/tmp/x", "hf:org/name", "..", "a\\b{c}"):
        stem = safe_stem(hostile)
        assert "/" not in stem and "\\" not in stem and not stem.startswith(".") and stem
        assert safe_stem(stem) == stem
