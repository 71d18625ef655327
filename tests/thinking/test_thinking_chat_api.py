"""Thinking through an OpenAI-compatible chat API (``--backend openai`` with a chat template): the server
decodes thought and answer in one request, so the request carries room for both
(``max_completion_tokens``), the template's ``enable_thinking`` (``chat_template_kwargs``) and the
reasoning effort; the answer alone is scored, split from the thought by the reply's fields or by the
close marker's token ids; a hidden thought and a thought that spent the budget are recorded as such.
The loopback server (``tests/backends/fake_chat.py``) renders chats as vLLM does, with the request's
template variables, and checks nothing else: every rule below is the project's."""

from __future__ import annotations

import json

import pytest
from transformers import AutoTokenizer

from coca_eval.cli import main
from tests.backends.fake_chat import FakeChatServer
from tests.thinking.conftest import THINKING_TEMPLATE

BUDGET = 200
THOUGHT = "<think>\nThe needle is somewhere in the text; I look for it.\n</think>\n\n"


@pytest.fixture
def built(ruler_builds) -> list:
    """Every RULER sample the run builds, in order (their ids are what the server renders)."""
    return ruler_builds


@pytest.fixture
def template(tmp_path) -> str:
    path = tmp_path / "thinking.jinja"
    path.write_text(THINKING_TEMPLATE)
    return str(path)


def _run(capsys, tmp_path, model, template, reply, *extra) -> tuple[int, str, list, FakeChatServer]:
    tokenizer = AutoTokenizer.from_pretrained(model)
    server = FakeChatServer(tokenizer, "tiny", reply, template=THINKING_TEMPLATE)
    output = tmp_path / "r.json"
    args = ["ruler", "--model", str(model), "--backend", "openai", "--tasks", "niah_single_1"]
    args += ["--lengths", "1000", "--samples", "2", "--chat-template", template, "--output", str(output)]
    with server as url, pytest.raises(SystemExit) as exit_info:
        main([*args, "--base-url", url, "--thinking", "on", "--think-budget", str(BUDGET), *extra])
        raise SystemExit(0)
    err = capsys.readouterr().err
    cells = json.loads(output.read_text())["cells"] if output.exists() else []
    return exit_info.value.code, err, cells, server


def _answer(built, ids) -> str:
    return " " + " ".join(next(s.answers for s in built if s.ids == ids))


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_the_answer_alone_is_scored_and_the_request_leaves_room_for_the_thought(
    capsys, tmp_path, tiny_chat_dir, template, built, field
):
    reply = lambda ids: {"content": _answer(built, ids), field: THOUGHT, "reasoning_tokens": 17}  # noqa: E731
    code, err, cells, server = _run(
        capsys, tmp_path, tiny_chat_dir, template, reply, "--reasoning-effort", "high"
    )
    assert code == 0, err
    (cell,) = cells
    assert cell["value"] == 100.0 and cell["detail"]["cut_in_thought"] == 0
    assert cell["detail"]["thinking"] == "on" and cell["detail"]["think_budget"] == BUDGET
    assert cell["detail"]["reasoning_effort"] == "high"  # a strict key of the gate
    for sample in cell["detail"]["samples"]:
        assert sample["thought"] == THOUGHT and sample["thought_tokens"] == 17
        assert "<think>" not in sample["output"] and "thought_hidden" not in sample
    for body in server.bodies:
        assert body["max_completion_tokens"] == BUDGET + 128 and "max_tokens" not in body
        assert body["chat_template_kwargs"] == {"enable_thinking": True}
        assert body["reasoning_effort"] == "high"


def test_a_thought_in_the_replys_token_ids_is_split_at_the_close_markers_ids(
    capsys, tmp_path, tiny_chat_dir, template, built
):
    """A server without a reasoning parser returns the whole completion; its ids (vLLM's
    ``return_token_ids``) are split at the close marker's ids, never by searching the text."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_chat_dir)
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    thought_ids = [*encode("<think>"), *encode(" somewhere in the text "), *encode("</think>")]

    def reply(ids):
        answer_ids = encode(_answer(built, ids))
        return {"content": tokenizer.decode(thought_ids + answer_ids), "token_ids": thought_ids + answer_ids}

    code, err, cells, _ = _run(capsys, tmp_path, tiny_chat_dir, template, reply)
    assert code == 0, err
    (cell,) = cells
    assert cell["value"] == 100.0
    for sample in cell["detail"]["samples"]:
        assert sample["thought_tokens"] == len(thought_ids) and sample["thought"].endswith("</think>")


def test_a_hidden_thought_is_recorded_as_hidden_with_its_count(
    capsys, tmp_path, tiny_chat_dir, template, built
):
    reply = lambda ids: {"content": _answer(built, ids), "reasoning_tokens": 312}  # noqa: E731
    code, err, cells, _ = _run(capsys, tmp_path, tiny_chat_dir, template, reply)
    assert code == 0, err
    (cell,) = cells
    assert cell["value"] == 100.0
    assert all(s["thought_hidden"] and s["thought_tokens"] == 312 for s in cell["detail"]["samples"])


def test_a_thought_that_spends_the_budget_leaves_no_answer_and_counts_as_cut(
    capsys, tmp_path, tiny_chat_dir, template, built
):
    reply = lambda ids: {"content": None, "reasoning_content": THOUGHT * 9, "finish_reason": "length"}  # noqa: E731
    code, err, cells, _ = _run(capsys, tmp_path, tiny_chat_dir, template, reply)
    assert code == 0, err
    (cell,) = cells
    assert cell["value"] == 0.0 and cell["detail"]["cut_in_thought"] == 1.0
    assert all(s["output"] == "" and s["thought_closed_by_budget"] for s in cell["detail"]["samples"])


def test_a_reasoning_effort_for_a_local_model_is_one_line(capsys, tmp_path, template):
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["ruler", "--model", "zoo-rope", "--tasks", "niah_single_1", "--lengths", "1000", "--samples",
             "1", "--chat-template", template, "--thinking", "on", "--reasoning-effort", "low",
             "--output", str(tmp_path / "r.json")]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--reasoning-effort is passed to a chat API" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_reasoning_effort_with_thinking_off_is_refused_before_any_model_loads(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["ruler", "--model", "no/such-model", "--thinking", "off", "--reasoning-effort", "low"])
    assert exit_info.value.code == 2 and "--reasoning-effort" in capsys.readouterr().err
