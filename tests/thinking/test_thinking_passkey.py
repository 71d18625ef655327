"""Passkey with a thought decoded apart: a double that always thinks before it gives the key (as a
reasoning model does) scores 100 when its thought fits the think budget, and its forced answer is what
is scored when the budget closes the thought; with thinking ignored the thought fills passkey's answer
budget and no key is read. Thoughts are recorded per sample, the cut share per cell, and the gate does
not pair runs of other thinking settings."""

from __future__ import annotations

import re

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.generation.thinking import Thinking
from coca_eval.methods import make_method
from coca_eval.passkey.params import make_passkey_params
from tests.generation.digest_backend import AnsweringBackend
from tests.thinking.conftest import THINKING_TEMPLATE

OPEN, CLOSE = "<think>", "</think>"
THOUGHT = " the key is somewhere above" * 6


class PasskeyThinker(AnsweringBackend):
    """Thinks (open marker, a thought, close marker), then says the key its prompt holds; asked again
    after a closed thought, it says the key alone."""

    fingerprint = "passkey-thinker"

    def answer(self, prompt) -> list[int]:
        text = self.tokenizer.decode(list(prompt))
        key = re.findall(r"pass key is (\d+)", text)[0]
        close = self.encode(CLOSE)
        reply = [*self.encode(f" {key}."), self.tokenizer.eos_token_id]
        if list(prompt[-len(close) :]) == close:
            return reply
        return [*self.encode(OPEN), *self.encode(THOUGHT), *close, *reply]

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_) -> bool:
        for i, prompt in enumerate(prompts):
            on_done(i, stop.cut(self.answer(prompt), {self.tokenizer.eos_token_id}, self.tokenizer.decode))
        return False


@pytest.fixture
def thinker(monkeypatch, tmp_path):
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "passkey-thinker" not in BACKENDS:
        BACKENDS.add(
            "passkey-thinker", BackendEntry("tests.thinking.test_thinking_passkey:load", "thinks, then keys")
        )
    template = tmp_path / "thinking.jinja"
    template.write_text(THINKING_TEMPLATE)
    return str(template)


load = PasskeyThinker.load


def _cell(tmp_path, template, name, thinking=None):
    params = make_passkey_params({"lengths": "600", "samples": 3, "chat_template": template, "seed": 2})
    method = make_method("zoo-rope", "none", "zoo", "float32", "passkey-thinker")
    options = {"thinking": thinking} if thinking is not None else {}
    (cell,) = evaluate("passkey", [method], params, tmp_path / f"{name}.json", Runtime(), **options).cells
    return cell


def _whole(thinker_template) -> int:
    from transformers import AutoTokenizer

    from tests.ruler.conftest import ZOO_CHECKPOINT

    tokenizer = AutoTokenizer.from_pretrained(ZOO_CHECKPOINT)
    return len(tokenizer(OPEN + THOUGHT + CLOSE, add_special_tokens=False).input_ids)


def test_a_thought_within_its_budget_is_split_off_and_the_key_scores(tmp_path, thinker):
    cell = _cell(tmp_path, thinker, "on", Thinking("on", 500))
    assert cell.status == "ok" and cell.value == 100.0  # every key read, in points
    for sample in cell.detail["samples"]:
        assert sample["correct"] and "think" not in sample["output"]
        assert sample["thought"].startswith(OPEN) and sample["thought"].endswith(CLOSE)
        assert sample["thought_closed_by_budget"] is False
    assert cell.detail["cut_in_thought"] == 0.0 and cell.detail["think_budget"] == 500


def test_a_thought_past_its_budget_is_closed_and_its_forced_answer_scores(tmp_path, thinker):
    budget = _whole(thinker) - 5
    cell = _cell(tmp_path, thinker, "cut", Thinking("on", budget))
    assert cell.detail["cut_in_thought"] == 1.0
    assert all(s["correct"] and s["thought_tokens"] == budget for s in cell.detail["samples"])


def test_thinking_off_spends_the_answer_budget_in_the_thought_and_reads_no_key(tmp_path, thinker):
    cell = _cell(tmp_path, thinker, "off", Thinking("off"))
    assert cell.value == 0.0 and not any(s["correct"] for s in cell.detail["samples"])
    assert "thought" not in cell.detail["samples"][0] and cell.detail["thinking"] == "off"


def test_the_gate_does_not_pair_passkey_runs_of_other_thinking_settings(tmp_path, thinker):
    from coca_eval.gate.protocol import CellPair, IncomparableRuns, check_units

    on = _cell(tmp_path, thinker, "a", Thinking("on", 500))
    other = _cell(tmp_path, thinker, "b", Thinking("on", 400))
    check_units(CellPair(on, on))
    with pytest.raises(IncomparableRuns, match="think_budget"):
        check_units(CellPair(on, other))
