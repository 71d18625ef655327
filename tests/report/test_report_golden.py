"""Golden files: the Markdown, LaTeX and CSV of a fixed run, byte for byte.

Regenerate after an intended change with ``COCA_EVAL_UPDATE_GOLDEN=1 pytest tests/report`` and review
the diff. The assertions below the comparison say what the golden files must show, so a regenerated
file that lost bold, OOM/inf, a group or a delta still fails.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from report_fixtures import fixed_runs

from coca_eval.report import build_report, load_definition

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("COCA_EVAL_UPDATE_GOLDEN") == "1"


def built(case: str, tmp_path: Path, formats=("md", "latex", "csv")) -> dict[str, str]:
    paths = fixed_runs(tmp_path)
    output = build_report(paths, load_definition(str(GOLDEN / f"{case}.yaml")), formats, tmp_path / "out")
    return {path.name: path.read_text(encoding="utf-8") for path in output.files}


@pytest.mark.parametrize("case", ["grouped", "intervals"])
def test_outputs_match_golden_files(case, tmp_path):
    files = built(case, tmp_path)
    expected_dir = GOLDEN / case
    if UPDATE:
        expected_dir.mkdir(exist_ok=True)
        for name, text in files.items():
            (expected_dir / name).write_text(text, encoding="utf-8")
    assert sorted(files) == sorted(p.name for p in expected_dir.iterdir())
    for name, text in files.items():
        assert text == (expected_dir / name).read_text(encoding="utf-8"), f"{case}/{name} differs"


def squash(text: str) -> str:
    """Markdown with column padding collapsed, so assertions read like the table."""
    return re.sub(r" +", " ", text)


def test_golden_markdown_shows_bold_best_failures_groups_and_deltas(tmp_path):
    md = squash(built("grouped", tmp_path)["report.md"])
    ppl_table = md.split("### Perplexity by evaluation length (pg19)")[1].split("###")[0]
    assert "| *Training from scratch* |" in ppl_table and "| *Extrapolation methods* |" in ppl_table
    assert "*Other*" not in ppl_table  # every method is in a group
    assert "| ALibi | **18.69** | **21.27** | OOM |" in ppl_table  # best within its group
    assert "| RoFormer | 19.66 | 411.50 | inf |" in ppl_table
    assert "| CoCA + NTK | 20.11 | **20.81** | **25.88** |" in ppl_table  # relabelled, ordered by the group
    assert "| RoFormer + dynamic NTK | **19.66** | 22.30 | 38.00 |" in ppl_table
    delta = md.split("change vs RoFormer")[1].split("###")[0]
    assert "| ALibi (delta) | -0.97 | -390.23 | OOM |" in delta
    assert "| RoFormer | 19.66 | 411.50 | inf |" in delta
    assert "| CoCA + NTK (delta) | +0.45 | -390.69 | n/a |" in delta
    passkey = md.split("### Passkey retrieval accuracy by prompt length")[1]
    assert "| *Paper, CoCA Table 2: Fine-tuning LLM* |" in passkey
    # the paper's 0-1 accuracies in points, beside ours, at our lengths only
    assert "| RoFormer + dynamic NTK & CoCA | **100** | **100** | **96** |" in passkey
    assert "The paper's columns at 4k, 8k, 16k, 32k have no run here and are left out." in passkey
    assert "| RoFormer | 100.00 | 50.00 | 30.00 |" in passkey


def test_golden_latex_and_csv(tmp_path):
    files = built("grouped", tmp_path)
    tex = files["ppl.tex"]
    assert (
        r"\toprule" in tex
        and r"\bottomrule" in tex
        and r"\multicolumn{4}{l}{\textit{Training from scratch}}" in tex
    )
    assert r"ALibi & \textbf{18.69} & \textbf{21.27} & OOM \\" in tex
    assert r"RoFormer & 19.66 & 411.50 & inf \\" in tex
    csv = files["ppl.csv"].splitlines()
    assert csv[0] == "group,method,512,1k,2k"
    assert "Training from scratch,ALibi,18.69,21.27,OOM" in csv
    assert "Extrapolation methods,RoFormer + dynamic NTK,19.66,22.30,38.00" in csv


def test_golden_intervals(tmp_path):
    md = built("intervals", tmp_path)["report.md"]
    assert "19.66 [18.70, 20.67] (n=2)" in md  # two documents at exp(log 19.66 -+ 0.05)
    assert "50.00 [23.66, 76.34] (n=10)" in md  # Wilson for 5 of 10, in points
    assert "Brackets: Wilson 95 % interval." in md
