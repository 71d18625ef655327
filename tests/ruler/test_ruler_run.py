"""A whole ``ruler`` run through the api on a scripted backend: planted answers score 100 on every
task, an empty answer 0; a killed run resumes from its journal to the same cells; a length too short
for the fixed parts is an error cell."""

from dataclasses import replace

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.results import load_run
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


def test_planted_answers_score_100_and_empty_answers_0(tmp_path, qa_dir, ruler_tokenizer):
    """The double answers with the builder's references, so first: each reference is in its prompt (the
    builder planted what it says it planted), then the run scores them 100 and nothing 0."""
    from tests.ruler.scripted_backend import PLANTED

    tasks = RULER_TASKS.names()
    PLANTED.clear()  # what earlier tests planted
    run = _run(tmp_path, tasks, lengths="1500,2048", qa_data=str(qa_dir))  # cwe's list needs > 1k zoo tokens
    tokenizer = ruler_tokenizer("zoo")
    assert len(PLANTED) == 2 * 2 * len(tasks)
    for ids, answers in PLANTED.items():
        text = tokenizer.decode(list(ids), skip_special_tokens=True)
        assert answers and all(a.lower() in text.lower() for a in answers), answers  # as scored
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
    run = _run(tmp_path, ["niah_single_1"], lengths="200,600")  # above the floor refused up front (178)
    short, fine = sorted(run.cells, key=lambda c: c.length)
    assert short.status == "error" and "too short" in short.detail["error"]
    assert fine.status == "ok" and fine.value == 100.0


def _split_run(tmp_path, params, shards: int, threshold_of=lambda k: None) -> list:
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare

    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    paths = []
    for k in range(1, shards + 1):
        own = params if threshold_of(k) is None else replace(params, threshold=threshold_of(k))
        share = ShardShare(parse_shard(f"{k}/{shards}"))
        shard = evaluate("ruler", [method], own, tmp_path / f"s{k}.json", Runtime(share=share))
        assert all(c.status == "partial" for c in shard.cells)
        paths.append(tmp_path / f"s{k}.json")
    return paths


def test_shards_merge_into_the_whole_run_with_its_threshold(tmp_path):
    """The cells, and the effective lengths read at the run's own ``--threshold`` (50 here, where
    RULER's 85.6 gives another length): a merged run is gated as the unsplit one is."""
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.gate.compare import run_gate
    from coca_eval.gate.options import make_options

    MODE["answer"] = "chance"
    values = {"tasks": "niah_single_1,niah_multivalue", "lengths": "600,900", "samples": 6,
              "chat_template": "none", "seed": 3, "threshold": 50}  # fmt: skip
    params = make_ruler_params(values)
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    whole = evaluate("ruler", [method], params, tmp_path / "whole.json", Runtime())
    merged = merge_shard_files(_split_run(tmp_path, params, 2))
    strip = lambda cells: [c.model_dump(exclude={"device", "dtype"}) for c in cells]  # noqa: E731
    assert strip(merged.cells) == strip(whole.cells)
    assert merged.config["effective_length"] == whole.config["effective_length"]
    assert whole.config["effective_length"]["threshold"] == 50
    at_ruler_bar = make_ruler_params({**values, "threshold": 85.6})
    other = evaluate("ruler", [method], at_ruler_bar, tmp_path / "bar.json", Runtime())
    assert other.config["effective_length"]["methods"] != whole.config["effective_length"]["methods"]
    MODE["answer"] = "empty"
    evaluate("ruler", [method], params, tmp_path / "cand.json", Runtime())
    whole, cand = load_run(tmp_path / "whole.json"), load_run(tmp_path / "cand.json")  # as files read back
    options = make_options("0.05", "99", 0.05, 0, 100)
    verdicts = [[(c.name, c.baseline, c.candidate, c.failed) for c in run_gate([(base, cand)], options).runs]
                for base in (whole, merged)]  # fmt: skip
    assert verdicts[0] == verdicts[1] and "threshold 50" in verdicts[0][0][0]


def test_shards_of_other_thresholds_are_not_one_run(tmp_path, capsys):
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.errors import CocaEvalError

    params = make_ruler_params({"tasks": "niah_single_1", "lengths": "600", "samples": 4,
                                "chat_template": "none", "seed": 3, "threshold": 50})  # fmt: skip
    paths = _split_run(tmp_path, params, 2, threshold_of=lambda k: 50 if k == 1 else 60)
    with pytest.raises(CocaEvalError, match="effective_length differ"):
        merge_shard_files(paths)
