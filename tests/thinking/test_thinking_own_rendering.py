"""Families that render the chat template's text themselves (MRCR's conversations, HELMET's and
LongBench's own protocols, BABILong's prepared sets) get ``--thinking on|off`` through the template's
text: the run's variables are set at its top, and the bound template renders what the template renders
with the variables passed, for templates that test the variable in the ways real ones do."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from transformers import AutoTokenizer

from coca_eval.cli import cli
from coca_eval.generation.thinking import Thinking, bound_template
from tests.thinking.conftest import THINKING_TEMPLATE

EMPTY_THOUGHT = "<think>\n\n</think>\n\n"
DEFAULTED = (  # the variable read through a default, as some templates do
    "{%- set thinking = enable_thinking | default(true) -%}"
    "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% if not thinking %}<think></think>{% endif %}{% endif %}"
)
IN_A_LOOP = (  # read inside a loop, where a variable set at the top must still be seen
    "{% for m in messages %}{% if loop.last and enable_thinking is defined and not enable_thinking %}"
    "[no thinking] {% endif %}{{ m['content'] }}\n{% endfor %}"
)
MESSAGES = [{"role": "user", "content": "Where is the needle?"}]


@pytest.mark.parametrize(
    "template", [THINKING_TEMPLATE, DEFAULTED, IN_A_LOOP], ids=["qwen3", "default", "loop"]
)
@pytest.mark.parametrize("enabled", [True, False])
def test_a_bound_template_renders_what_the_variable_passed_renders(tiny_chat_dir, template, enabled):
    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_dir)
    render = lambda text, **extra: tokenizer.apply_chat_template(  # noqa: E731
        MESSAGES, chat_template=text, add_generation_prompt=True, tokenize=False, **extra
    )
    passed = render(template, enable_thinking=enabled)
    assert render(bound_template(template, {"enable_thinking": enabled})) == passed
    assert passed != render(template, enable_thinking=not enabled)  # the variable changes the text


def test_the_defaults_leave_the_template_as_it_is():
    assert Thinking().bound(THINKING_TEMPLATE) is THINKING_TEMPLATE
    assert Thinking("off").bound("{{ messages }}") == "{{ messages }}"  # a template without the variable
    assert Thinking("off").bound(None) is None


def test_mrcr_conversations_are_rendered_with_thinking_off_and_stay_exact(tmp_path):
    template, dump = tmp_path / "thinking.jinja", tmp_path / "prompts"
    template.write_text(THINKING_TEMPLATE)
    args = ["mrcr", "--model", "zoo-rope", "--needles", "2", "--lengths", "1k"]
    args += ["--samples", "2", "--chat-template", str(template), "--thinking", "off"]
    result = CliRunner().invoke(
        cli, [*args, "--output", str(tmp_path / "r.json"), "--dump-prompts", str(dump)]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (dump / "mrcr.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["prompt"].endswith(EMPTY_THOUGHT) and row["prompt_tokens"] == row["length"] - 96
    run = json.loads((tmp_path / "r.json").read_text())
    assert all(cell["detail"]["thinking"] == "off" for cell in run["cells"])


def test_longbench_published_prompts_are_rendered_with_thinking_off(tmp_path):
    from tests.longbench import longbench_oracle_backend

    longbench_oracle_backend.register()
    template = tmp_path / "thinking.jinja"
    template.write_text(THINKING_TEMPLATE)
    args = ["longbench", "--model", "zoo-rope", "--backend", "longbench-oracle", "--protocol", "longbench"]
    args += ["--tasks", "hotpotqa", "--lengths", "1000", "--samples", "1", "--chat-template", str(template)]
    for thinking, ends in (("off", True), ("auto", False)):
        out = tmp_path / thinking
        result = CliRunner().invoke(
            cli, [*args, "--thinking", thinking, "--output", str(out / "r.json"), "--dump-prompts", str(out)]
        )
        assert result.exit_code == 0, result.output
        (row,) = [json.loads(line) for line in (out / "longbench.jsonl").read_text().splitlines()]
        assert row["prompt"].endswith(EMPTY_THOUGHT) is ends
