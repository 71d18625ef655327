"""``--samples auto`` in the ruler task: a cell that is settled stops early, one at chance spends the
cap, a killed run resumes to the same cells, the stop is the one a replay of the scores gives, and the
stopping rule enters the cell keys only under ``auto``."""

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.ruler.params import make_ruler_params
from coca_eval.sequential import StoppingRule, stop_point, visiting_order
from tests.ruler.scripted_backend import MODE, Interrupted

TASKS = "niah_single_1,niah_multivalue"


def _run(tmp_path, name="run.json", **values):
    params = make_ruler_params(
        # the prompt alone as N: these statistical checks were sized on those prompts' scripted answers
        {
            "tasks": TASKS,
            "lengths": "600,900",
            "chat_template": "none",
            "seed": 3,
            "length_counts": "prompt",
            **values,
        }
    )
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    return evaluate("ruler", [method], params, tmp_path / name, Runtime())


AUTO = {"samples": "auto", "max_samples": 60}


@pytest.mark.usefixtures("scripted")
def test_cells_that_always_answer_right_stop_early(tmp_path):
    run = _run(tmp_path, **AUTO)
    assert len(run.cells) == 4
    for cell in run.cells:
        seq = cell.detail["sequential"]
        assert cell.status == "ok" and cell.value == 100.0
        assert cell.n == seq["samples_spent"] < 60 and seq["decision"] == "above 0.856"
        assert len(cell.detail["samples"]) == cell.n
        assert seq["interval"][0] > 0.856 and cell.detail["interval95"] == [100 * b for b in seq["interval"]]
        assert seq["visited"] == visiting_order("ruler", 3, cell.length, 60)[: cell.n]
        assert [s["index"] for s in cell.detail["samples"]] == sorted(seq["visited"])
    assert MODE["answered"] == sum(c.n for c in run.cells)  # nothing past the stop was decoded


@pytest.mark.usefixtures("scripted")
def test_cells_at_chance_spend_the_cap(tmp_path):
    MODE["answer"] = "chance"
    run = _run(tmp_path, threshold=50, **AUTO)
    for cell in run.cells:
        assert cell.n == 60 and cell.detail["sequential"]["decision"] == "undecided at 60"
        assert 20 < cell.value < 80
        low, high = cell.detail["sequential"]["interval"]
        assert low < 0.5 < high


@pytest.mark.usefixtures("scripted")
def test_the_stop_is_what_a_replay_of_the_scores_gives(tmp_path):
    """The live stop equals the rule applied afterwards to the spent scores in visiting order."""
    MODE["answer"] = "chance"
    run = _run(tmp_path, target_width=40, **AUTO)
    for cell in run.cells:
        scores = {s["index"]: s["score"] for s in cell.detail["samples"]}
        visited = cell.detail["sequential"]["visited"]
        replay = stop_point([scores[i] for i in visited], StoppingRule(60, target_width=0.4))
        assert (replay.spent, list(replay.interval)) == (cell.n, cell.detail["sequential"]["interval"])
        assert replay.decision == cell.detail["sequential"]["decision"]


@pytest.mark.usefixtures("scripted")
def test_a_killed_sequential_run_resumes_to_the_same_cells(tmp_path):
    MODE["answer"] = "chance"
    values = {"threshold": 50, **AUTO}
    whole = _run(tmp_path, "whole.json", **values)
    spent = MODE["answered"]
    MODE.update(fail_after=75, answered=0)  # in the middle of the second cell's rounds
    with pytest.raises(Interrupted):
        _run(tmp_path, "resumed.json", **values)
    MODE.update(fail_after=None, answered=0)
    resumed = _run(tmp_path, "resumed.json", **values)
    assert MODE["answered"] == spent - 75  # only what the journal did not hold
    strip = lambda cells: [c.model_dump(exclude={"detail"}) for c in cells]  # noqa: E731
    assert strip(resumed.cells) == strip(whole.cells)
    assert [c.detail for c in resumed.cells] == [c.detail for c in whole.cells]


@pytest.mark.usefixtures("scripted")
def test_a_sequential_cell_holds_the_fixed_runs_samples(tmp_path):
    """Under auto the design is the fixed run of --max-samples: same index, same references."""
    auto = _run(tmp_path, "auto.json", **AUTO)
    fixed = _run(tmp_path, "fixed.json", samples=60)
    for a, f in zip(auto.cells, fixed.cells, strict=True):
        by_index = {s["index"]: s["answers"] for s in f.detail["samples"]}
        assert all(s["answers"] == by_index[s["index"]] for s in a.detail["samples"])
        assert "sequential" not in f.detail and f.n == 60


def test_fixed_runs_keep_their_identity():
    """Cell keys of fixed-count runs are as before the option; the rule enters only under auto, and
    the threshold only where it stops cells."""
    fixed = make_ruler_params({"samples": 50}).identity()
    assert not {"max_samples", "target_width", "threshold"} & set(fixed)
    by_threshold = make_ruler_params({"samples": "auto", "max_samples": 50}).identity()
    assert by_threshold["threshold"] == 85.6 and by_threshold["max_samples"] == 50
    by_width = make_ruler_params({"samples": "auto", "max_samples": 50, "target_width": 10}).identity()
    assert by_width["target_width"] == 10 and "threshold" not in by_width
    other = make_ruler_params({"samples": "auto", "max_samples": 50, "threshold": 50}).identity()
    assert other != by_threshold


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"samples": "auto"}, "--samples auto needs --max-samples"),
        ({"samples": "auto", "max_samples": 0}, "--samples auto needs --max-samples"),
        ({"samples": "auto", "max_samples": 50, "target_width": 0.0}, "--target-width must be"),
        ({"samples": "auto", "max_samples": 50, "target_width": 100}, "--target-width must be"),
        ({"samples": "auto", "max_samples": 50, "threshold": 100}, "must then lie in"),
        ({"samples": 50, "max_samples": 50}, "--max-samples only apply with --samples auto"),
        ({"samples": 50, "target_width": 5}, "--target-width only apply with --samples auto"),
        ({"samples": "many"}, "--samples must be a positive integer"),
    ],
)
def test_rules_that_cannot_be_followed_are_refused(values, message):
    with pytest.raises(CocaEvalError, match=message):
        make_ruler_params(values)


def test_auto_refuses_a_shard(tmp_path):
    from coca_eval.distributed.partition import parse_shard
    from coca_eval.distributed.share import ShardShare
    from coca_eval.ruler.task import RulerRunner

    params = make_ruler_params({"tasks": TASKS, **AUTO})
    with pytest.raises(CocaEvalError, match="--samples auto decides after each round"):
        RulerRunner(params, None, None, share=ShardShare(parse_shard("1/2")))


@pytest.mark.usefixtures("scripted")
def test_the_gate_pairs_only_the_samples_both_runs_spent(tmp_path):
    from coca_eval.gate import run_gate
    from coca_eval.gate.options import make_options
    from coca_eval.results import load_run

    _run(tmp_path, "base.json", **AUTO)
    MODE["answer"] = "chance"
    _run(tmp_path, "cand.json", **AUTO)
    base, cand = load_run(tmp_path / "base.json"), load_run(tmp_path / "cand.json")
    result = run_gate([(base, cand)], make_options("2%", "5", 0.05, 0, 1000))
    for verdict in result.cells:
        b, c = verdict.pair.base, verdict.pair.cand
        assert b.n != c.n  # stopped at different counts: a fixed-sample pairing would not fit
        shared = {s["index"] for s in b.detail["samples"]} & {s["index"] for s in c.detail["samples"]}
        assert verdict.units == len(shared) == min(b.n, c.n)
    assert result.exit_code == 1 and all(v.result.effect > 0 for v in result.cells)
