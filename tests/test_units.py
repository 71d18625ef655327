"""One unit for accuracy-like scores: a committed results file of the old unit (``coca-eval/2``, passkey
accuracy 0-1) reads in points, and reports and gates exactly as its twin written today in points
(``coca-eval/3``, each cell's ``unit`` stated), with the verdicts the gate gave it before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.journal import Journal
from coca_eval.results import SCHEMA, Cell, Run, read_results_text, save_run
from coca_eval.taskspec import cell_in_points, in_points, load_checked_run, save_run_in_points

ROOT = Path(__file__).resolve().parent.parent
OLD = ROOT / "reports" / "zoo" / "runs" / "table2_passkey.json.gz"  # seven methods x six lengths, 0-1
ROWS = ["--baseline-method", "ALiBi", "--candidate-method", "NoPE"]
# What `coca-eval gate` gave this file with ROWS before passkey printed points (`--max-acc-drop 0.05`):
# each length's verdict, accuracy drop (0-1) and Holm-adjusted p.
BEFORE = [
    (512, "pass", 0.0, 1.0),
    (1024, "inconclusive", 0.09, 0.18311718106269836),
    (2048, "regression", 0.21, 2.86102294921875e-06),
    (4096, "regression", 0.09, 0.009765625),
    (8192, "inconclusive", 0.05, 0.125),
    (16384, "inconclusive", 0.03, 0.25),
]


def invoke(capsys, monkeypatch, *args) -> tuple[int, str, str]:
    """The real entry point in this process, at a fixed width: its exit code and output."""
    from test_gate_cli import invoke as in_process

    monkeypatch.setenv("COLUMNS", "200")
    result = in_process(capsys, *args)
    return result.returncode, result.stdout, result.stderr


@pytest.fixture(scope="module")
def twin(tmp_path_factory) -> Path:
    """The old file as a run made today writes it: read (in points), then saved."""
    path = tmp_path_factory.mktemp("twin") / OLD.name
    save_run(load_checked_run(OLD), path)  # read in points, so written in the current schema
    return path


def test_the_twin_holds_the_old_numbers_in_points_and_says_so(twin):
    old, new = (json.loads(read_results_text(p)) for p in (OLD, twin))
    assert (old["schema"], new["schema"]) == ("coca-eval/2", SCHEMA)
    assert len(old["cells"]) == len(new["cells"]) == 42
    for before, after in zip(old["cells"], new["cells"], strict=True):
        assert "unit" not in before and after["unit"] == "points"
        assert after["value"] == pytest.approx(100 * before["value"])
        assert after["detail"]["wilson95"] == pytest.approx([100 * x for x in before["detail"]["wilson95"]])
        assert after["detail"]["samples"] == before["detail"]["samples"]  # right or wrong, no unit
    assert load_checked_run(OLD).cells == load_checked_run(twin).cells


def test_an_old_file_reports_as_its_twin(twin, tmp_path, capsys, monkeypatch):
    texts = []
    for path, out in ((OLD, tmp_path / "old"), (twin, tmp_path / "new")):
        options = ["--format", "md", "--format", "csv", "--intervals", "--paper", "table2", "--no-plots"]
        code, stdout, stderr = invoke(capsys, monkeypatch, "report", path, "--out", out, *options)
        assert code == 0, stderr
        texts.append({p.name: p.read_text() for p in sorted(out.iterdir()) if p.is_file()})
    assert texts[0] == texts[1] and "report.md" in texts[0]
    md = texts[0]["report.md"]
    assert "| ALiBi" in md and "100.00 [96.30, 100.00]" in md  # 100 of 100, Wilson's interval in points


@pytest.mark.parametrize("drop", ["5", "5%"])
def test_an_old_file_gates_as_its_twin_and_as_before(twin, capsys, monkeypatch, drop):
    outputs = {}
    for base, cand in ((OLD, OLD), (twin, twin), (OLD, twin), (twin, OLD)):
        code, stdout, stderr = invoke(capsys, monkeypatch, "gate", "--baseline", base, "--candidate", cand,
                                      *ROWS, "--max-acc-drop", drop, "--json")  # fmt: skip
        assert code == 1, stderr
        outputs[base, cand] = json.loads(stdout)
    first = outputs[OLD, OLD]
    assert all(verdict == first for verdict in outputs.values())
    got = [(c["length"], c["verdict"], c["effect"], c["p_adjusted"]) for c in first["cells"]]
    assert [(n, v, p) for n, v, _, p in got] == [(n, v, pytest.approx(p)) for n, v, _, p in BEFORE]
    assert [e for *_, e, _ in got] == pytest.approx([100 * e for *_, e, _ in BEFORE])  # now in points
    tables = {invoke(capsys, monkeypatch, "gate", b, c, *ROWS)[1] for b, c in ((OLD, OLD), (twin, twin))}
    (table,) = tables  # the printed table too, in points
    assert "max accuracy drop 5 points" in table and "100.00 -> 100.00" in table and "-21.00" in table


def test_a_cell_that_says_fraction_reads_in_points_and_perplexity_is_never_touched():
    stated = Cell(task="ruler", method="m", metric="score", length=8, value=0.25, n=4, unit="fraction")
    assert (cell_in_points(stated).value, cell_in_points(stated).unit) == (25.0, "points")
    ppl = Cell(task="ppl", method="m", metric="ppl", length=8, value=12.5, n=4)
    assert cell_in_points(ppl, old=True) == ppl
    run = load_checked_run(ROOT / "reports" / "baseline" / "ppl_tiny.json")
    assert in_points(run) is run  # nothing accuracy-like: the very same run


def test_a_journaled_passkey_cell_of_the_old_unit_reads_in_points(tmp_path):
    """A journal has no schema to date its cells: a passkey cell without a unit predates them (0-1);
    one that says ``points`` is taken as it is."""
    old = Cell(task="passkey", method="m", metric="accuracy", length=8, value=0.75, n=4,
               detail={"accuracy": 0.75, "wilson95": [0.3, 0.95]})  # fmt: skip
    new = Cell(task="passkey", method="m", metric="accuracy", length=16, value=75.0, n=4, unit="points")
    with Journal(tmp_path / "j.jsonl") as journal:
        journal.record_cell("old", old)
        journal.record_cell("new", new)
    with Journal(tmp_path / "j.jsonl") as journal:
        read_old, read_new = journal.finished("old"), journal.finished("new")
    assert (read_old.value, read_old.unit, read_old.detail["wilson95"]) == (75.0, "points", [30.0, 95.0])
    assert read_old.detail["accuracy"] == 75.0 and read_new == new


def test_a_run_is_written_with_every_accuracy_like_unit_stated(tmp_path):
    """A run's command writes each accuracy-like cell saying ``points`` (a RULER cell built without
    one too), perplexity without a unit, in the current schema."""
    cells = [
        Cell(task="ruler", method="m", metric="score", dataset="niah_single_1", length=8, value=50.0, n=2),
        Cell(task="passkey", method="m", metric="accuracy", length=8, value=50.0, n=2),
        Cell(task="ppl", method="m", metric="ppl", length=8, value=12.5, n=2),
    ]
    save_run_in_points(Run(schema="coca-eval/3", config={"task": "ruler"}, cells=cells), tmp_path / "r.json")
    raw = json.loads((tmp_path / "r.json").read_text())
    assert raw["schema"] == SCHEMA and [c["unit"] for c in raw["cells"]] == ["points", "points", None]
    assert [c["value"] for c in raw["cells"]] == [50.0, 50.0, 12.5]
