"""A RULER journal or results file whose numbers are not what its samples earn is never believed: a
forged journal part is answered again, a forged journaled cell computed again, a results file whose
cell contradicts its samples or whose threshold is not a score is refused on load (one line, exit 2)."""

import json

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.results import load_run
from coca_eval.ruler.params import make_ruler_params
from coca_eval.taskspec import load_checked_run
from tests.ruler.scripted_backend import MODE
from tests.test_cli import run_cli

pytestmark = pytest.mark.usefixtures("scripted")
VALUES = {"tasks": "niah_single_1,vt", "lengths": "900", "samples": 4, "chat_template": "none", "seed": 3}


def _run(path):
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("ruler", [method], make_ruler_params(VALUES), path, Runtime())


def _journal(out):
    return out.with_suffix(".journal.jsonl")


def _rewrite(path, change) -> int:
    """Apply ``change`` to every journal entry (it returns True where it changed one); the count."""
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    changed = sum(bool(change(entry)) for entry in entries)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return changed


def _forge_part(entry) -> bool:
    if entry["kind"] == "part" and entry["data"]["score"] == 0.0:
        entry["data"]["score"] = 1.0  # full credit for an empty answer
        return True
    return False


def test_a_forged_journal_part_is_answered_again(tmp_path):
    MODE["answer"] = "empty"
    whole = _run(tmp_path / "whole.json")
    out = tmp_path / "run.json"
    _run(out)
    journal = _journal(out)
    lines = journal.read_text().splitlines()
    journal.write_text("".join(line + "\n" for line in lines if json.loads(line)["kind"] != "cell"))  # parts
    forged = _rewrite(journal, _forge_part)
    assert forged == 8
    MODE["answered"] = 0
    rerun = _run(out)
    assert MODE["answered"] == forged  # each forged sample decoded again, nothing else
    assert [c.value for c in rerun.cells] == [c.value for c in whole.cells] == [0.0, 0.0]


def test_a_forged_journaled_cell_is_computed_again(tmp_path):
    MODE["answer"] = "empty"
    out = tmp_path / "run.json"
    _run(out)

    def forge(entry) -> bool:
        if entry["kind"] == "cell":
            entry["cell"]["value"] = 100.0
            return True
        return False

    assert _rewrite(_journal(out), forge) == 2
    MODE["answered"] = 0
    rerun = _run(out)
    assert MODE["answered"] == 0  # the parts are sound: the cells are formed from them again
    assert [c.value for c in rerun.cells] == [0.0, 0.0]


def _edit_results(path, change) -> None:
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


def test_a_cell_value_its_samples_do_not_give_is_refused_on_load(tmp_path):
    out = tmp_path / "run.json"
    _run(out)
    _edit_results(out, lambda raw: raw["cells"][0].update(value=3.0))  # its 4 samples are all right
    with pytest.raises(CocaEvalError, match=r"contradicts itself at cells.0: the value is 3.0 but its 4"):
        load_checked_run(out)
    result = run_cli("report", str(out), "--out", str(tmp_path / "report"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "contradicts itself" in result.stderr


def test_a_sample_scored_otherwise_than_its_output_is_refused_on_load(tmp_path):
    MODE["answer"] = "empty"
    out = tmp_path / "run.json"
    _run(out)

    def forge(raw) -> None:
        cell = raw["cells"][0]
        for sample in cell["detail"]["samples"]:
            sample["score"], sample["found"] = 1.0, [True] * len(sample["answers"])
        cell["value"] = cell["detail"]["score"] = 100.0

    _edit_results(out, forge)
    with pytest.raises(CocaEvalError, match="sample 0 is scored 1.0 but its output earns 0.0"):
        load_checked_run(out)


@pytest.mark.parametrize("threshold", ["50", [50], 200, -1, True])
def test_a_forged_threshold_is_refused_on_load(tmp_path, threshold):
    out = tmp_path / "run.json"
    _run(out)
    _edit_results(out, lambda raw: raw["config"]["effective_length"].update(threshold=threshold))
    with pytest.raises(CocaEvalError, match=r"is invalid at config.effective_length.threshold"):
        load_checked_run(out)
    result = run_cli("gate", "--baseline", str(out), "--candidate", str(out))
    assert result.returncode == 2 and "effective_length.threshold" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_sound_file_loads(tmp_path):
    out = tmp_path / "run.json"
    run = _run(out)
    assert load_checked_run(out).cells == load_run(out).cells
    assert [c.value for c in run.cells] == [100.0, 100.0]


def test_the_report_reads_the_effective_length_at_the_runs_threshold(tmp_path):
    from coca_eval.report.assemble import make_tables
    from coca_eval.report.definition import ReportDefinition
    from coca_eval.report.runs import merge_runs

    MODE["answer"] = "chance"
    values = {**VALUES, "samples": 8}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    notes = {}
    for threshold in (30, 85.6):
        path = tmp_path / f"t{threshold}.json"
        evaluate("ruler", [method], make_ruler_params({**values, "threshold": threshold}), path, Runtime())
        (summary, *_) = make_tables(merge_runs([path]), ReportDefinition())
        notes[threshold] = (summary.notes[0], [e.text for e in summary.rows[0].entries[-2:]])
    assert "reaches 30" in notes[30][0] and "reaches 85.6" in notes[85.6][0]
    assert notes[30][1] != notes[85.6][1]  # a length reaches 30 on chance answers, none reaches 85.6
    with pytest.raises(CocaEvalError, match=r"different --threshold \(30, 85.6\)"):
        make_tables(merge_runs([tmp_path / "t30.json", tmp_path / "t85.6.json"]), ReportDefinition())
