"""A whole ``ruler`` run through the api on a scripted backend: planted answers score 100 on every
task, an empty answer 0; a killed run resumes from its journal to the same cells; a length too short
for the fixed parts is an error cell."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.ruler.params import make_ruler_params
from coca_eval.ruler.tasks import RULER_TASKS
from tests.ruler.scripted_backend import MODE, Interrupted

pytestmark = pytest.mark.usefixtures("scripted")


def _run(tmp_path, tasks, lengths="600,900", samples=2, name="run.json", qa_data=None):
    params = make_ruler_params(
        {"tasks": tasks, "lengths": lengths, "samples": samples, "chat_template": "none", "seed": 3,
         "qa_data": qa_data}
    )  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("ruler", [method], params, tmp_path / name, Runtime())


def test_planted_answers_score_100_and_empty_answers_0(tmp_path, qa_dir):
    tasks = RULER_TASKS.names()
    run = _run(tmp_path, tasks, lengths="1500,2048", qa_data=str(qa_dir))  # cwe's list needs > 1k zoo tokens
    assert {c.dataset for c in run.cells} == set(tasks)
    assert len(run.cells) == 2 * len(tasks)
    assert all(c.status == "ok" and c.value == 100.0 and c.n == 2 for c in run.cells), [
        (c.dataset, c.length, c.status, c.value, c.detail.get("error")) for c in run.cells if c.value != 100
    ]
    MODE["answer"] = "empty"
    empty = _run(tmp_path, tasks, lengths="1500,2048", name="empty.json", qa_data=str(qa_dir))
    assert all(c.status == "ok" and c.value == 0.0 for c in empty.cells)
    sample = empty.cells[0].detail["samples"][0]
    assert sample["output"] == "" and sample["found"] == [False] * len(sample["answers"])


def test_a_killed_run_resumes_to_the_same_cells(tmp_path):
    tasks = ["niah_single_1", "niah_multikey_2", "vt"]
    whole = _run(tmp_path, tasks, lengths="900,1200", name="whole.json")
    MODE.update(fail_after=3, answered=0)
    with pytest.raises(Interrupted):
        _run(tmp_path, tasks, lengths="900,1200", name="resumed.json")
    MODE.update(fail_after=None, answered=0)
    resumed = _run(tmp_path, tasks, lengths="900,1200", name="resumed.json")
    assert MODE["answered"] == 2 * 2 * len(tasks) - 3  # only what the journal did not hold
    strip = lambda cells: [c.model_dump(exclude={"detail"}) for c in cells]  # noqa: E731
    assert strip(resumed.cells) == strip(whole.cells)
    assert [c.detail["samples"] for c in resumed.cells] == [c.detail["samples"] for c in whole.cells]


def test_a_length_below_the_fixed_parts_is_an_error_cell(tmp_path):
    run = _run(tmp_path, ["niah_single_1"], lengths="40,600")
    short, fine = sorted(run.cells, key=lambda c: c.length)
    assert short.status == "error" and "too short" in short.detail["error"]
    assert fine.status == "ok" and fine.value == 100.0


def test_shards_merge_into_the_whole_runs_cells(tmp_path):
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare

    params = make_ruler_params({"tasks": "niah_single_1,niah_multivalue", "lengths": "600", "samples": 5,
                                "chat_template": "none", "seed": 3})  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    whole = evaluate("ruler", [method], params, tmp_path / "whole.json", Runtime())
    for k in (1, 2):
        share = ShardShare(parse_shard(f"{k}/2"))
        shard = evaluate("ruler", [method], params, tmp_path / f"s{k}.json", Runtime(share=share))
        assert all(c.status == "partial" for c in shard.cells)
    merged = merge_shard_files([tmp_path / "s1.json", tmp_path / "s2.json"])
    strip = lambda cells: [c.model_dump(exclude={"device", "dtype"}) for c in cells]  # noqa: E731
    assert strip(merged.cells) == strip(whole.cells)
