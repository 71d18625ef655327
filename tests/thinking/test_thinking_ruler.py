"""Acceptance of thinking on a RULER NIAH cell, with the thinking double (``thinking_backend.py``):
a think budget the thought fits in scores 100 with the answer alone as the output; a budget shorter
than the thought closes every thought by the budget and the forced answer is what is scored; with
thinking off the thought is decoded inside RULER's 128-token answer budget and scores 0."""

from __future__ import annotations

import json

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.generation.thinking import Thinking
from coca_eval.methods import make_method
from coca_eval.ruler.params import make_ruler_params
from tests.thinking.thinking_backend import CALLS, thought_ids

pytestmark = pytest.mark.usefixtures("thinking_model")
WHOLE = 161  # the double's thought in zoo tokens, both markers included


def _cell(tmp_path, template: str, name: str, thinking: Thinking | None = None, samples: int = 3):
    params = make_ruler_params(
        {
            "tasks": ["niah_single_1"],
            "lengths": "900",
            "samples": samples,
            "chat_template": template,
            "seed": 1,
        }
    )
    method = make_method("zoo-rope", "none", "zoo", "float32", "thinking")
    options = {"thinking": thinking} if thinking is not None else {}
    run = evaluate("ruler", [method], params, tmp_path / f"{name}.json", Runtime(), **options)
    (cell,) = run.cells
    return cell


def test_the_tokenizer_sees_the_thought_as_the_test_says():
    from transformers import AutoTokenizer

    from tests.ruler.conftest import ZOO_CHECKPOINT

    assert len(thought_ids(AutoTokenizer.from_pretrained(ZOO_CHECKPOINT))) == WHOLE


@pytest.mark.parametrize("budget", [WHOLE, 4 * WHOLE])
def test_a_thought_within_its_budget_is_split_off_and_the_answer_alone_scores(
    tmp_path, thinking_model, budget
):
    cell = _cell(tmp_path, thinking_model["thinking"], "on", Thinking("on", budget))
    assert cell.status == "ok" and cell.value == 100.0
    for sample in cell.detail["samples"]:
        assert sample["output"] == " " + " ".join(sample["answers"])  # the answer alone
        assert sample["thought"].startswith("<think>") and sample["thought"].endswith("</think>")
        assert "hmm" not in sample["output"] and sample["thought_tokens"] == WHOLE
        assert sample["thought_closed_by_budget"] is False
    assert cell.detail["cut_in_thought"] == 0.0
    assert cell.detail["thinking"] == "on" and cell.detail["think_budget"] == budget
    assert cell.detail["think_markers"] == ["<think>", "</think>"]  # found in the chat template
    assert CALLS == [3, 3]  # one call for the thoughts, one for the answers: the batch stays whole


@pytest.mark.parametrize("budget", [1, 40, WHOLE - 1])
def test_a_thought_past_its_budget_is_closed_by_the_marker_and_its_forced_answer_scores(
    tmp_path, thinking_model, budget
):
    cell = _cell(tmp_path, thinking_model["thinking"], "cut", Thinking("on", budget))
    assert cell.status == "ok" and cell.value == 100.0
    assert cell.detail["cut_in_thought"] == 1.0
    for sample in cell.detail["samples"]:
        assert sample["thought_closed_by_budget"] is True and sample["thought_tokens"] == budget
        assert sample["thought"].endswith("</think>")
        assert sample["output"] == " " + " ".join(sample["answers"])


def test_thinking_off_decodes_the_thought_inside_the_answer_budget_and_scores_0(tmp_path, thinking_model):
    cell = _cell(tmp_path, thinking_model["thinking"], "off", Thinking("off"))
    assert cell.status == "ok" and cell.value == 0.0
    sample = cell.detail["samples"][0]
    assert sample["output"].startswith("<think> hmm") and "thought" not in sample
    assert cell.detail["thinking"] == "off" and "cut_in_thought" not in cell.detail


def test_auto_follows_a_template_that_thinks_by_default(tmp_path, thinking_model):
    cell = _cell(tmp_path, thinking_model["thinking"], "auto")
    assert cell.value == 100.0 and cell.detail["thinking"] == "on" and cell.detail["think_budget"] == 4096


def test_auto_on_a_template_that_knows_nothing_of_thinking_records_nothing_of_it(tmp_path, thinking_model):
    cell = _cell(tmp_path, thinking_model["plain"], "plain")
    assert cell.value == 0.0  # the double thinks anyway: today's harnesses score it 0
    assert not any(key.startswith("think") or key == "cut_in_thought" for key in cell.detail)
    assert not any("thought" in key for sample in cell.detail["samples"] for key in sample)


def test_thinking_on_with_a_template_that_cannot_turn_it_on_is_refused(tmp_path, thinking_model):
    from coca_eval.errors import CocaEvalError

    with pytest.raises(CocaEvalError, match="does not take enable_thinking"):
        _cell(tmp_path, thinking_model["plain"], "refused", Thinking("on", 100))
    assert CALLS == []  # refused before any decoding (the runner checks the template file up front)


def test_the_gate_refuses_to_pair_thinking_and_plain_runs(tmp_path, thinking_model):
    from coca_eval.gate.protocol import CellPair, IncomparableRuns, check_units

    on = _cell(tmp_path, thinking_model["thinking"], "on", Thinking("on", 500))
    other = _cell(tmp_path, thinking_model["thinking"], "other", Thinking("on", 400))
    off = _cell(tmp_path, thinking_model["thinking"], "off", Thinking("off"))
    check_units(CellPair(on, on))
    for candidate, key in ((other, "think_budget"), (off, "thinking")):
        with pytest.raises(IncomparableRuns, match=key):
            check_units(CellPair(on, candidate))


def test_cells_of_one_length_think_and_answer_together_and_resume_from_the_journal(tmp_path, thinking_model):
    params = make_ruler_params(
        {"tasks": ["niah_single_1", "niah_single_2"], "lengths": "900", "samples": 2,
         "chat_template": thinking_model["thinking"], "seed": 1}
    )  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "thinking")
    output = tmp_path / "together.json"
    run = evaluate("ruler", [method], params, output, Runtime(), thinking=Thinking("on", 60))
    assert [c.value for c in run.cells] == [100.0, 100.0] and CALLS == [4, 4]  # companions decode along
    assert all(s["thought_closed_by_budget"] for c in run.cells for s in c.detail["samples"])
    CALLS.clear()
    again = evaluate("ruler", [method], params, output, Runtime(), thinking=Thinking("on", 60))
    assert CALLS == [] and [c.detail for c in again.cells] == [c.detail for c in run.cells]
    other = evaluate("ruler", [method], params, output, Runtime(force=True), thinking=Thinking("on", 500))
    assert CALLS == [4, 4]  # another think budget is another cell: nothing taken from the journal
    assert all(not s["thought_closed_by_budget"] for c in other.cells for s in c.detail["samples"])


@pytest.mark.parametrize(("counts", "room"), [("prompt+answer", 0), ("prompt+answer+thought", 200)])
def test_a_thought_counted_in_n_leaves_the_prompt_that_much_shorter(tmp_path, thinking_model, counts, room):
    """RULER's users' accounting for reasoning models: N = prompt + answer budget + think budget."""
    from coca_eval.ruler.report import length_text

    params = make_ruler_params(
        {"tasks": ["niah_single_1"], "lengths": "1200", "samples": 2, "seed": 1,
         "chat_template": thinking_model["thinking"], "length_counts": counts}
    )  # fmt: skip
    method = make_method("zoo-rope", "none", "zoo", "float32", "thinking")
    dump = tmp_path / "prompts"
    run = evaluate(
        "ruler", [method], params, tmp_path / f"{room}.json", Runtime(), thinking=Thinking("on", 200),
        dump_prompts=dump,
    )  # fmt: skip
    assert [c.value for c in run.cells] == [100.0]
    rows = [json.loads(line) for line in (dump / "ruler.jsonl").read_text().splitlines()]
    assert [row["prompt_tokens"] for row in rows] == [1200 - 128 - room] * 2
    assert run.cells[0].detail["length_counts"] == counts
    assert ("think budget" in length_text(run.config["params"])) is bool(room)
