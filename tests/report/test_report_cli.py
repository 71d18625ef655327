"""`coca-eval report` end to end: every format, one self-contained HTML, LaTeX that compiles, errors."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from report_fixtures import fixed_runs, opencompass_run
from test_gate_cli import invoke


@pytest.fixture
def runs(tmp_path):
    return [*fixed_runs(tmp_path), opencompass_run(tmp_path)]


def test_all_formats(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "report"
    args = ["report", *runs, "--out", out, "--paper", "table1", "--delta-vs", "RoFormer", "--intervals"]
    result = invoke(capsys, *args, *[x for f in ("md", "latex", "csv", "html") for x in ("--format", f)])
    assert result.returncode == 0, result.stderr
    assert "Perplexity by evaluation length" in result.stdout and "OpenCompass" in result.stdout
    written = {p.name for p in out.iterdir()}
    assert {
        "report.md",
        "report.tex",
        "report.html",
        "ppl.csv",
        "ppl_delta.tex",
        "opencompass.csv",
    } <= written
    html = (out / "report.html").read_text()
    sources = re.findall(r'src="([^"]*)"', html)
    assert len(sources) == 5 and all(
        s.startswith("data:image/png;base64,") for s in sources
    )  # 4 + the paper's
    assert "<link" not in html and "<script" not in html  # one file, nothing fetched
    # the paper's rows fill our lengths only (512, 1k, 2k); its longer columns are named in a note
    assert '<tr class="group"><td colspan="4"><em>Paper, CoCA Table 1: Training from scratch</em>' in html
    assert "columns at 4k, 8k, 16k, 32k have no run here and are left out." in html


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine installed")
def test_latex_compiles(runs, tmp_path, capsys):
    out = tmp_path / "tex"
    result = invoke(
        capsys, "report", *runs, "--out", out, "--format", "latex", "--paper", "table3", "--intervals"
    )
    assert result.returncode == 0, result.stderr
    compiled = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=out, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stdout[-2000:]
    assert (out / "report.pdf").stat().st_size > 10000


def test_a_paper_table_without_matching_runs_stands_alone(runs, tmp_path, capsys):
    out = tmp_path / "alone"
    result = invoke(
        capsys, "report", runs[0], "--out", out, "--paper", "prope-table2", "--format", "csv", "--no-plots"
    )
    assert result.returncode == 0, result.stderr
    assert (out / "paper_prope_table2.csv").read_text().splitlines()[:2] == [
        "encoding,Wiki,FlanV2",
        "NoPE,4.8594,6.6429",
    ]
    assert not (out / "plots").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--paper", "table9"], "unknown paper table 'table9'"),
        (["--delta-vs", "nobody"], "--delta-vs 'nobody': no such method"),
        (["--definition", "missing.yaml"], "report definition not found"),
        (["--format", "pdf"], "Invalid value for '--format'"),
        (["--digits", "-1"], "--digits"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(runs, tmp_path, capsys, extra, message):
    result = invoke(capsys, "report", runs[0], "--out", tmp_path / "x", "--no-plots", *extra)
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_or_corrupt_results_file(tmp_path, capsys):
    assert "results file not found" in invoke(capsys, "report", tmp_path / "nope.json").stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = invoke(capsys, "report", bad)
    assert result.returncode == 2 and "not readable JSON" in result.stderr
