"""MRCR through ``--backend openai`` with a chat template: each conversation goes to
``/chat/completions`` as its messages, turn by turn, and the server's rendering of them (the loopback
server of tests/backends/fake_chat.py renders chats as vLLM does) must be the prompt's own tokens, so
the model answers the same exact-length prompt as on the hf backend; the server repeats the wanted
turn, read from the conversation it rendered."""

from __future__ import annotations

import json

import pytest
from transformers import AutoTokenizer

from coca_eval.cli import main
from tests.backends.fake_chat import FakeChatServer
from tests.mrcr.mrcr_oracle_backend import wanted


def test_conversations_go_as_messages_and_render_to_the_prompts_tokens(capsys, tiny_chat_dir, tmp_path):
    chat_model = tiny_chat_dir  # its template is the one the oracle reads (``### role:`` lines)
    tokenizer = AutoTokenizer.from_pretrained(chat_model)

    def repeat(ids: list[int]) -> str:
        prefix, answers, number = wanted(tokenizer.decode(ids, skip_special_tokens=True))
        return prefix + answers[number - 1]

    output = tmp_path / "run.json"
    args = ["mrcr", "--model", str(chat_model), "--backend", "openai", "--needles", "2,4", "--lengths", "1k",
            "--samples", "2", "--output", str(output)]  # fmt: skip
    server = FakeChatServer(tokenizer, "tiny", repeat)
    with server as url, pytest.raises(SystemExit) as exit_info:
        main([*args, "--base-url", url])
        raise SystemExit(0)
    assert exit_info.value.code == 0, capsys.readouterr().err
    run = json.loads(output.read_text())
    assert [c["value"] for c in run["cells"]] == [100.0, 100.0]
    assert all(c["detail"]["chat_completions"] for c in run["cells"])
    assert len(server.bodies) == 4
    for body in server.bodies:
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] and len(roles) > 5
        assert body["add_generation_prompt"] is True and body["max_tokens"] == 96
        assert body["messages"][-1]["content"].startswith("Repeat word for word the ")
