"""A whole ``helmet`` run through the api on the scripted backend: planted answers score 100 on every
task and nothing 0, a killed run resumes to the same cells, a forged sample is refused on load, the
category table and effective lengths come out of the cells."""

from __future__ import annotations

import json

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.errors import CocaEvalError
from coca_eval.helmet.params import make_helmet_params
from coca_eval.helmet.report import read_category, summary_table, task_table
from coca_eval.helmet.tasks import HELMET_TASKS, RECALL
from coca_eval.methods import make_method
from coca_eval.results import load_run
from coca_eval.taskspec import load_checked_run
from tests.ruler.scripted_backend import MODE, PLANTED, Interrupted

pytestmark = pytest.mark.usefixtures("scripted")
TASKS = [t for t in HELMET_TASKS.names() if HELMET_TASKS.get(t).family in ("json_kv", "ruler")]


def _run(tmp_path, tasks=TASKS, lengths="1024,1500", samples=2, name="run.json", **params):
    values = {"tasks": tasks, "lengths": lengths, "samples": samples, "seed": 3, **params}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("helmet", [method], make_helmet_params(values), tmp_path / name, Runtime())


def test_planted_answers_score_100_and_empty_answers_0(tmp_path):
    PLANTED.clear()
    run = _run(tmp_path)
    assert len(PLANTED) == 2 * 2 * len(TASKS)
    assert {(c.dataset, c.length) for c in run.cells} == {(t, n) for t in TASKS for n in (1024, 1500)}
    assert all(c.status == "ok" and c.value == 100.0 and c.n == 2 for c in run.cells)
    kv = next(c for c in run.cells if c.dataset == "json_kv")
    assert kv.detail["protocol"] == "exact" and kv.detail["category"] == RECALL
    assert kv.detail["samples"][0]["substring_exact_match"] == 1.0 and kv.detail["samples"][0]["depths"]
    MODE["answer"] = "empty"
    empty = _run(tmp_path, name="empty.json")
    assert all(c.status == "ok" and c.value == 0.0 for c in empty.cells)


def test_a_killed_run_resumes_to_the_same_cells(tmp_path):
    whole = _run(tmp_path, name="whole.json")
    MODE.update(fail_after=5, answered=0)
    with pytest.raises(Interrupted):
        _run(tmp_path, name="resumed.json")
    MODE.update(fail_after=None, answered=0)
    resumed = _run(tmp_path, name="resumed.json")
    assert MODE["answered"] < 2 * 2 * len(TASKS)  # the journaled answers were not asked again
    assert [(c.dataset, c.length, c.value, c.detail["samples"]) for c in resumed.cells] == [
        (c.dataset, c.length, c.value, c.detail["samples"]) for c in whole.cells
    ]


def test_a_forged_sample_score_is_refused_on_load(tmp_path):
    _run(tmp_path, tasks=["json_kv"], lengths="1024")
    path = tmp_path / "run.json"
    data = json.loads(path.read_text())
    data["cells"][0]["detail"]["samples"][0]["output"] = "no idea"
    path.write_text(json.dumps(data))
    with pytest.raises(CocaEvalError, match="sample 0 is scored 1.0 but its output earns 0.0"):
        load_checked_run(path)


def test_the_category_table_averages_the_tasks_and_reads_the_effective_length(tmp_path):
    MODE["answer"] = "chance"
    run = _run(tmp_path, lengths="1024,1500,2048", samples=6)
    method = run.cells[0].method
    mine = [c for c in run.cells if c.method == method]
    reading = read_category(mine, RECALL)
    for score in reading.scores:
        at = [c.value for c in mine if c.length == score.length]
        assert score.average == pytest.approx(sum(at) / len(at))
    assert reading.bar == pytest.approx(0.85 * reading.scores[0].average)
    summary = summary_table(run.cells)
    assert summary.rows[0].label == f"{method}: {RECALL}"
    assert [e.text for e in summary.rows[0].entries[:3]] == [f"{s.average:.1f}" for s in reading.scores]
    table = task_table(run.cells, method)
    assert [r.label for r in table.rows] == [*TASKS, "Recall average"]
    recorded = load_run(tmp_path / "run.json").config["effective_length"]
    assert recorded["share"] == 85 and recorded["methods"][method][RECALL]["effective"] == reading.effective


def test_a_length_too_short_is_an_error_cell_and_the_run_goes_on(tmp_path):
    run = _run(tmp_path, tasks=["json_kv", "ruler_niah_mk_2"], lengths="150,1024")
    short = {(c.dataset, c.length): c for c in run.cells}
    assert short["json_kv", 150].status == "error" and "too short" in short["json_kv", 150].detail["error"]
    assert short["json_kv", 1024].status == "ok" and short["ruler_niah_mk_2", 1024].status == "ok"


def test_rag_cells_under_both_protocols(tmp_path):
    from tests.helmet.helmet_files import write_data_dir

    data = str(write_data_dir(tmp_path / "data", 5))
    exact = _run(tmp_path, ["kilt_nq", "kilt_popqa_3"], "3000", 3, "exact.json", data=data)
    assert all(c.status == "ok" and c.value == 100.0 and c.n == 3 for c in exact.cells)
    assert {c.detail["category"] for c in exact.cells} == {"RAG"}
    helmet = _run(tmp_path, ["kilt_nq"], "8k", 3, "helmet.json", data=data, protocol="helmet")
    (cell,) = helmet.cells
    assert cell.status == "ok" and cell.value == 100.0 and cell.detail["protocol"] == "helmet"
    assert all(s["truncated_tokens"] > 0 and s["prompt_tokens"] == 8172 for s in cell.detail["samples"])
    MODE["answer"] = "empty"
    empty = _run(tmp_path, ["kilt_nq"], "3000", 3, "empty.json", data=data)
    assert empty.cells[0].value == 0.0


def test_shards_merge_into_the_whole_run_with_its_effective_lengths(tmp_path):
    """HELMET cells split over two shards (RAG from files among them) merge into the unsplit run's
    cells, and the merged run records the same per-category effective lengths at the same share."""
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare
    from tests.helmet.helmet_files import write_data_dir

    MODE["answer"] = "chance"
    data = str(write_data_dir(tmp_path / "data", 3))
    values = {"tasks": "json_kv,kilt_nq", "lengths": "1024,3000", "samples": 6, "seed": 3, "data": data,
              "share": 70}  # fmt: skip
    params = make_helmet_params(values)
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    whole = evaluate("helmet", [method], params, tmp_path / "whole.json", Runtime())
    paths = []
    for k in (1, 2):
        share = ShardShare(parse_shard(f"{k}/2"))
        shard = evaluate("helmet", [method], params, tmp_path / f"s{k}.json", Runtime(share=share))
        assert all(c.status == "partial" for c in shard.cells)
        paths.append(tmp_path / f"s{k}.json")
    merged = merge_shard_files(paths)
    strip = lambda cells: [c.model_dump(exclude={"device", "dtype"}) for c in cells]  # noqa: E731
    assert strip(merged.cells) == strip(whole.cells)
    assert merged.config["effective_length"] == whole.config["effective_length"]
    assert whole.config["effective_length"]["share"] == 70
    assert set(whole.config["effective_length"]["methods"][method.label]) == {"Recall", "RAG"}


def test_the_report_names_the_protocol_under_helmets_tables(tmp_path, capsys):
    from test_gate_cli import invoke

    MODE["answer"] = "chance"
    run = _run(tmp_path, tasks=["json_kv", "ruler_niah_mv"], lengths="1024,1500", samples=4)
    result = invoke(capsys, "report", tmp_path / "run.json", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    markdown = (tmp_path / "out" / "report.md").read_text()
    heatmaps = list((tmp_path / "out" / "plots").glob("helmet_depth_heatmap_*.png"))
    assert len(heatmaps) == 1 and "found by depth" in markdown
    from coca_eval.generation.heatmaps import needles_by_task

    needles = needles_by_task(run.cells, run.cells[0].method, "helmet")
    assert len(needles["json_kv"]) == 2 * 4 and len(needles["ruler_niah_mv"]) == 2 * 4 * 4  # every depth
    assert "HELMET: 2 tasks" in markdown
    assert "protocol exact (prompt + answer budget = N" in markdown
    assert "| Method: category" in markdown
