"""A whole ``babilong`` run on the scripted backend: the bAbI answer scores 100 and nothing 0; the
tables and effective length come from the cells; BABILong's prepared rows from --data; a forged sample
is refused on load; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.babilong.params import make_babilong_params
from coca_eval.babilong.report import summary_table, task_table
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.taskspec import load_checked_run
from tests.ruler.scripted_backend import MODE, PLANTED, Interrupted
from tests.ruler.test_ruler_cli import _cli

pytestmark = pytest.mark.usefixtures("scripted")


def _run(tmp_path, name="run.json", **values):
    values = {"tasks": "qa1,qa2,qa3", "lengths": "2000,2500", "samples": 3, "seed": 3, **values}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("babilong", [method], make_babilong_params(values), tmp_path / name, Runtime())


def test_the_answer_scores_100_and_nothing_0(tmp_path):
    PLANTED.clear()
    run = _run(tmp_path, samples=12)
    assert len(PLANTED) == 3 * 2 * 12
    assert all(c.status == "ok" and c.value == 100.0 and c.n == 12 for c in run.cells)
    sample = run.cells[0].detail["samples"][0]
    assert (
        sample["question"].startswith("Where")
        and sample["depths"]
        and run.cells[0].detail["source"] == "generate"
    )
    method = run.cells[0].method
    assert [r.label for r in task_table(run.cells, method).rows] == ["qa1", "qa2", "qa3", "Average"]
    assert summary_table(run.cells).rows[0].entries[-1].text == "2500"
    MODE["answer"] = "empty"
    assert all(c.value == 0.0 for c in _run(tmp_path, "empty.json", samples=12).cells)


def test_prepared_rows_from_data(tmp_path):
    rows = [
        {
            "input": f"Noise. Mary went to the {room}. More noise.",
            "question": "Where is Mary?",
            "target": room,
        }
        for room in ("kitchen", "garden", "office")
    ]
    (tmp_path / "data" / "1k").mkdir(parents=True)
    (tmp_path / "data" / "1k" / "qa1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = _run(tmp_path, tasks="qa1", lengths="1k", source="babilong", data=str(tmp_path / "data"))
    (cell,) = run.cells
    assert cell.status == "ok" and cell.value == 100.0 and cell.detail["source"] == "babilong"
    with pytest.raises(CocaEvalError, match="has no 2k/qa1.jsonl"):
        _run(tmp_path, "x.json", tasks="qa1", lengths="2k", source="babilong", data=str(tmp_path / "data"))


def test_the_facts_only_0k_set_is_the_base_of_the_effective_length(capsys, tmp_path):
    """BABILong's 0k rows run as length 0, print as ``0k`` and are the bar's base (85 % of 0k)."""
    prepared = str(Path(__file__).parent / "data" / "prepared")
    args = ("--tasks", "qa1,qa8", "--lengths", "0k,1k", "--samples", "2", "--source", "babilong")
    code, out, err = _cli(capsys, "babilong", "--model", "zoo-rope", "--backend", "scripted", *args,
                          "--data", prepared, "--output", str(tmp_path / "o.json"))  # fmt: skip
    assert code == 0, err
    header = next(line for line in out.splitlines() if "Task" in line)
    assert [c.strip() for c in header.split("┃") if c.strip()] == ["Task", "0k", "1k"]
    summary = next(line for line in out.splitlines() if line.startswith("│ RoFormer"))
    assert [c.strip() for c in summary.split("│") if c.strip()] == ["RoFormer", "100.0", "100.0", "<0k"]
    assert sorted({c["length"] for c in json.loads((tmp_path / "o.json").read_text())["cells"]}) == [0, 1024]


def test_a_forged_sample_is_refused_on_load(tmp_path):
    _run(tmp_path, tasks="qa1", lengths="2000")
    path = tmp_path / "run.json"
    data = json.loads(path.read_text())
    data["cells"][0]["detail"]["samples"][0]["output"] = "I do not know"
    path.write_text(json.dumps(data))
    with pytest.raises(CocaEvalError, match="sample 0 is scored 1.0 but its output earns 0.0"):
        load_checked_run(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tasks", "qa21"), "unknown BABILong task 'qa21'"),
        (("--tasks", "qa4"), "qa4 needs bAbI's task files"),
        (("--prompt-parts", "preamble"), "unknown prompt part 'preamble'"),
        (("--source", "lm-eval"), "Invalid value for '--source'"),
        (("--babi-data", "/no/such"), "--babi-data /no/such: no such file or directory"),
        (("--share", "0"), "--share must be a percentage"),
        (("--lengths", "0k,1k"), "length 0k is BABILong's facts-only set: it needs --source babilong"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    code, out, err = _cli(capsys, "babilong", "--model", "zoo-rope", "--backend", "scripted", *args)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_shards_merge_into_the_whole_run_with_its_effective_length(tmp_path):
    """BABILong cells split over two shards merge into the unsplit run's cells, and the merged run
    records the same effective length at the same share."""
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare

    MODE["answer"] = "chance"
    params = make_babilong_params({"tasks": "qa1,qa2", "lengths": "1000,1500", "samples": 6, "share": 70})
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    whole = evaluate("babilong", [method], params, tmp_path / "whole.json", Runtime())
    paths = []
    for k in (1, 2):
        share = ShardShare(parse_shard(f"{k}/2"))
        shard = evaluate("babilong", [method], params, tmp_path / f"s{k}.json", Runtime(share=share))
        assert all(c.status == "partial" for c in shard.cells)
        paths.append(tmp_path / f"s{k}.json")
    merged = merge_shard_files(paths)
    strip = lambda cells: [c.model_dump(exclude={"device", "dtype"}) for c in cells]  # noqa: E731
    assert strip(merged.cells) == strip(whole.cells)
    assert merged.config["effective_length"] == whole.config["effective_length"]
    recorded = whole.config["effective_length"]
    assert recorded["share"] == 70 and set(recorded["methods"][method.label]) == {
        "bar",
        "effective",
        "average",
        "lower",
    }


def test_the_report_draws_each_methods_task_by_length_heat_map(tmp_path, capsys):
    from test_gate_cli import invoke

    MODE["answer"] = "chance"
    run = _run(tmp_path, samples=4)
    result = invoke(capsys, "report", tmp_path / "run.json", "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    (heatmap,) = (tmp_path / "out" / "plots").glob("babilong_heatmap_*.png")
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert heatmap.stem in markdown and "with 95 % intervals" in markdown
    from coca_eval.babilong.plots import accuracy_grid
    from coca_eval.generation.report import interval

    labels = accuracy_grid(run.cells, ["qa1", "qa2", "qa3"], [2000, 2500])
    cell = next(c for c in run.cells if (c.dataset, c.length) == ("qa2", 2500))
    low, high = interval(cell)
    assert labels[1][1] == f"{cell.value:.0f}\n[{low:.0f}, {high:.0f}]" and low <= cell.value <= high
    assert "BABILong: 3 tasks, source generate" in markdown


def test_prepared_sets_out_of_reach_are_one_line_before_any_model_loads(capsys, monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("offline")

    monkeypatch.setattr("datasets.load_dataset", offline)
    code, out, err = _cli(capsys, "babilong", "--model", "zoo-rope", "--backend", "scripted", "--source",
                          "babilong", "--tasks", "qa2", "--lengths", "4k")  # fmt: skip
    assert code == 2 and "Traceback" not in err and "loading" not in err, err
    expected = (
        "qa2 at 4k reads RMT-team/babilong-1k-samples from the hub, which failed (ConnectionError); "
        "save its rows as DIR/4k/qa2.jsonl and pass --data DIR"
    )
    assert err.strip().splitlines()[-1].endswith(expected), err


def test_a_killed_run_resumes_to_the_same_cells(tmp_path):
    MODE["answer"] = "chance"
    whole = _run(tmp_path, "whole.json")
    MODE.update(fail_after=7, answered=0)
    with pytest.raises(Interrupted):
        _run(tmp_path, "resumed.json")
    MODE.update(fail_after=None, answered=0)
    resumed = _run(tmp_path, "resumed.json")
    assert 0 < MODE["answered"] < 3 * 2 * 3  # the journaled answers were not asked again
    key = lambda run: [(c.dataset, c.length, c.value, c.detail["samples"]) for c in run.cells]  # noqa: E731
    assert key(resumed) == key(whole)


def test_samples_auto_stops_each_cell_on_its_interval_width(tmp_path):
    """``--samples auto --target-width 40``: every cell draws rounds until its interval is narrower
    than 40 points or ``--max-samples``; the planted answer (all right) stops early, well under the cap."""
    run = _run(tmp_path, tasks="qa1", lengths="2000", samples="auto", max_samples=64, target_width=40)
    (cell,) = run.cells
    assert cell.status == "ok" and cell.value == 100.0 and 0 < cell.n < 64
    low, high = cell.detail["interval95"]
    assert high - low < 40 and run.config["params"]["samples"] == "auto"
    with pytest.raises(CocaEvalError, match="--samples auto needs --target-width for BABILong"):
        make_babilong_params({"samples": "auto", "max_samples": 64})
