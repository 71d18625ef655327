"""Whole ``coca-eval longbench`` runs on a backend double that answers the smoke set from each prompt's
text: the recorded scores are LongBench's metric of the recorded outputs (the few-shot tasks' first
line only), a rerun resumes with nothing to decode; and what is refused before any model loads, in one
line naming the file, the row and the field: a missing field, an unknown task, an unreadable file, a
missing task file, ``--version 2``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from coca_eval.longbench.params import SMOKE_DIR
from coca_eval.longbench.scoring import sample_score
from tests.longbench import longbench_oracle_backend

TASKS = "multifieldqa_en,hotpotqa,trec,samsum,passage_count,passage_retrieval_zh,lcc"


def _invoke(*args: str):
    longbench_oracle_backend.register()
    return CliRunner().invoke(
        cli, ["longbench", "--model", "zoo-rope", "--backend", "longbench-oracle", *args]
    )


def test_a_run_scores_each_output_as_longbench_and_resumes(tmp_path, monkeypatch):
    output = tmp_path / "run.json"
    args = ("--tasks", TASKS, "--lengths", "1k,2k", "--samples", "2", "--chat-template", "none")
    result = _invoke(*args, "--output", str(output))
    assert result.exit_code == 0, result.output
    run = json.loads(output.read_text())
    assert len(run["cells"]) == 7 * 2
    for cell in run["cells"]:
        assert cell["detail"]["protocol"] == "exact" and cell["detail"]["rows"] == 2
        for sample in cell["detail"]["samples"]:
            expected = sample_score(
                cell["dataset"], sample["output"], sample["answers"], sample["all_classes"]
            )
            assert sample["score"] == expected
    by_task = {(c["dataset"], c["length"]): c["value"] for c in run["cells"]}
    # the double's second line ("Dialogue: ...") is not scored on the few-shot tasks
    assert by_task["trec", 1024] == by_task["passage_count", 2048] == by_task["lcc", 2048] == 100.0
    from coca_eval.longbench.reading import READING
    from coca_eval.results import load_run

    loaded = load_run(output)
    tables = {t.name: t for t in READING.tables(loaded.cells, None, [loaded])}
    english = {r.label: [e.text for e in r.entries] for r in tables["longbench_categories_en_RoFormer"].rows}
    assert english["Code Completion"] == ["100.0", "100.0"] and "Avg" in english
    assert "Single-Doc QA" not in {r.label for r in tables["longbench_categories_zh_RoFormer"].rows}
    calls = []
    monkeypatch.setattr(
        longbench_oracle_backend.LongBenchOracle, "generate_greedy", lambda *a, **k: calls.append(a)
    )
    assert _invoke(*args, "--output", str(output)).exit_code == 0
    assert not calls and json.loads(output.read_text())["cells"] == run["cells"]


def test_the_published_protocol_runs_every_row_at_every_length(tmp_path):
    output = tmp_path / "run.json"
    args = ("--protocol", "longbench", "--tasks", "samsum,passage_count", "--lengths", "500,3000")
    assert _invoke(*args, "--samples", "2", "--chat-template", "none", "--output", str(output)).exit_code == 0
    cells = json.loads(output.read_text())["cells"]
    assert [c["n"] for c in cells] == [2, 2, 2, 2]
    assert all(c["detail"]["length_counts"] == "prompt" for c in cells)


def _refused(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["longbench", "--model", "/nonexistent/model", *args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    return err


def _copy(tmp_path: Path, task: str) -> Path:
    folder = tmp_path / "lb" / "data"
    folder.mkdir(parents=True)
    shutil.copy(SMOKE_DIR / "data" / f"{task}.jsonl", folder / f"{task}.jsonl")
    return folder / f"{task}.jsonl"


def test_a_row_missing_a_field_is_named_before_any_model_loads(tmp_path, capsys):
    path = _copy(tmp_path, "hotpotqa")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    del rows[1]["all_classes"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    err = _refused(capsys, "--tasks", "hotpotqa", "--data", str(tmp_path / "lb"))
    assert f"{path} row 1: missing column all_classes" in err


def test_a_mistyped_field_an_unreadable_file_and_a_missing_task_are_refused(tmp_path, capsys):
    path = _copy(tmp_path, "trec")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["answers"] = "Location"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = str(tmp_path / "lb")
    assert f"{path} row 0: answers: not a list of texts" in _refused(
        capsys, "--tasks", "trec", "--data", data
    )
    path.write_text("{not json\n")
    assert f"{path} row 0: not JSON" in _refused(capsys, "--tasks", "trec", "--data", data)
    assert "no data/lcc.jsonl" in _refused(capsys, "--tasks", "lcc", "--data", data)
    assert "unknown longbench task nope" in _refused(capsys, "--tasks", "nope")
    assert "LongBench-E has no narrativeqa" in _refused(capsys, "--tasks", "narrativeqa", "--subset", "e")


def test_the_quick_preset_is_the_offline_smoke_set():
    from coca_eval.presets import get_preset

    preset = get_preset("longbench-quick", task="longbench")
    assert preset.params["data"] == "smoke" and preset.methods == ({"model": "smollm2-135m"},)
    assert get_preset("longbench", task="longbench").params["protocol"] == "longbench"
    assert get_preset("longbench-e", task="longbench").params["subset"] == "e"


def test_blank_references_and_a_file_not_in_utf8_are_refused(tmp_path, capsys):
    path = _copy(tmp_path, "trec")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["answers"] = ["", "  "]  # would match any output
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = str(tmp_path / "lb")
    assert f"{path} row 1: answers: no reference" in _refused(capsys, "--tasks", "trec", "--data", data)
    path.write_bytes('{"input": "caf\xe9"}\n'.encode("latin-1"))
    err = _refused(capsys, "--tasks", "trec", "--data", data)
    assert str(path) in err and "UTF-8" in err and len(err.strip().splitlines()) == 1, err


def test_longbench_e_buckets_follow_each_rows_own_length(tmp_path):
    """Rows given lengths 5000 and 9000 (the data's own count) land in 4-8k and 8k+; 0-4k is empty."""
    from coca_eval.longbench.reading import bucket_tables
    from coca_eval.results import load_run

    folder = tmp_path / "lb" / "data"
    folder.mkdir(parents=True)
    for task in ("hotpotqa", "trec"):
        rows = [
            json.loads(line) for line in (SMOKE_DIR / "data" / f"{task}_e.jsonl").read_text().splitlines()
        ]
        rows[0]["length"], rows[1]["length"] = 5000, 9000
        (folder / f"{task}_e.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    output = tmp_path / "run.json"
    args = ("--tasks", "hotpotqa,trec", "--subset", "e", "--data", str(tmp_path / "lb"), "--samples", "2")
    result = _invoke(*args, "--protocol", "longbench", "--lengths", "1000", "--output", str(output))
    assert result.exit_code == 0, result.output
    cells = load_run(output).cells
    (table,) = bucket_tables(cells)
    assert table.columns == ["0-4k", "4-8k", "8k+"]
    shown = {row.label: [e.text for e in row.entries] for row in table.rows}
    per_row = {
        c.dataset: [100 * s["score"] for s in sorted(c.detail["samples"], key=lambda s: s["index"])]
        for c in cells
    }
    for task, (first, second) in per_row.items():
        assert shown[task] == ["-", f"{first:.2f}", f"{second:.2f}"]
    means = [sum(per_row[t][i] for t in per_row) / 2 for i in (0, 1)]
    assert shown["Average"] == ["-", f"{means[0]:.2f}", f"{means[1]:.2f}"]
    assert not bucket_tables([c for c in cells if c.detail.get("subset") != "e"])


def test_a_missing_scoring_library_is_one_line_before_any_model_loads(capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "fuzzywuzzy" else real(name, *a)
    )
    message = _refused(capsys, "--tasks", "hotpotqa,lcc")
    assert "need fuzzywuzzy: pip install 'coca-eval[longbench]'" in message
