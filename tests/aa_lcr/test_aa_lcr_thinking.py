"""A reasoning model on AA-LCR: the judge is shown the answer alone, never the thought decoded before
it (the thought is recorded beside the answer), with a double that thinks before it answers and a chat
template of our own that takes ``enable_thinking``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli
from tests.aa_lcr.aa_lcr_doubles import AaLcrOracle, FakeJudge, smoke_rows

OPEN, CLOSE, THOUGHT = "<think>", "</think>", " hmm" * 20
TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)


class ThinkingOracle(AaLcrOracle):
    """The oracle's answer after a thought, unless the prompt already ends with a closed one."""

    fingerprint = "aa-lcr-thinking"

    def answer(self, prompt) -> list[int]:
        reply = super().answer(prompt)
        if self.tokenizer.decode(list(prompt[-8:])).rstrip().endswith(CLOSE):
            return reply
        return [*self.encode(OPEN + THOUGHT + CLOSE), *reply]

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_) -> bool:
        eos = {self.tokenizer.eos_token_id}
        for i, prompt in enumerate(prompts):
            on_done(i, stop.cut(self.answer(prompt), eos, self.tokenizer.decode))
        return False


@pytest.fixture
def thinking_backend():
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "aa-lcr-thinking" not in BACKENDS:
        entry = BackendEntry("tests.aa_lcr.test_aa_lcr_thinking:ThinkingOracle.load", "thinks, then answers")
        BACKENDS.add("aa-lcr-thinking", entry)


def test_the_judge_sees_the_answer_alone(thinking_backend, tmp_path):
    template = tmp_path / "thinking.jinja"
    template.write_text(TEMPLATE)
    verdicts = {row["question"]: "CORRECT" for row in smoke_rows()}
    judge = FakeJudge(verdicts)
    output = tmp_path / "run.json"
    args = [
        "aa-lcr", "--model", "zoo-rope", "--backend", "aa-lcr-thinking", "--chat-template", str(template),
        "--lengths", "4k", "--samples", "2", "--answer-tokens", "48", "--judge-protocol", "1.0",
        "--thinking", "on", "--think-budget", "200", "--judge", judge.url, "--output", str(output),
    ]  # fmt: skip
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        judge.close()
    assert result.exit_code == 0, result.output
    (cell,) = json.loads(output.read_text())["cells"]
    for sample in cell["detail"]["samples"]:
        assert sample["thought_tokens"] > 0 and not sample["thought_closed_by_budget"]
        assert "hmm" not in sample["output"] and "think>" not in sample["output"]
        user = sample["judge_prompt"][-1]["content"]
        assert f"CANDIDATE ANSWER TO ASSESS: {sample['output'].strip()}\n" in user and "hmm" not in user
    assert len(judge.calls) == 2
