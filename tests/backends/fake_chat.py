"""A loopback OpenAI-compatible chat completions server that renders chats as vLLM does.

Each ``/v1/chat/completions`` request's messages go through the tokenizer's chat template (with
``add_generation_prompt`` and ``continue_final_message`` as the request says) and are tokenised
without special tokens added, as ``vllm serve`` does; ``answer(prompt_ids)`` gives the reply's text.
The reply carries ``usage.prompt_tokens`` and, when ``report_ids``, the prompt's ids (vLLM's
``return_token_ids``), and with ``logprobs`` one ``logprob`` per answer token (a NaN one plays a model
answering from non-finite logits). Every request body is kept (``server.bodies``).

A reasoning model's reply: ``answer`` returns a dict instead of the content, with ``content`` and any
of ``reasoning_content`` / ``reasoning`` (the thought, under either name), ``finish_reason``,
``token_ids`` (the whole completion's ids, as vLLM's ``return_token_ids`` gives them) and
``reasoning_tokens`` (``usage.completion_tokens_details``). The request's ``chat_template_kwargs``
reach the template; ``template`` serves another chat template than the tokenizer's (``vllm serve
--chat-template``).
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

from tests.backends.fake_completions import FakeServer


def make_chat_handler(
    tokenizer,
    name: str,
    answer: Callable[[list[int]], str | dict],
    report_ids: bool,
    logprob: float = -0.5,
    template: str | None = None,
):
    class ChatHandler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.server.requests.append((self.path, dict(self.headers)))
            self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self.server.requests.append((self.path, dict(self.headers)))
            self.server.bodies.append(body)
            if urllib.parse.urlsplit(self.path).path != "/v1/chat/completions" or body.get("model") != name:
                self._send(404, {"error": "no such model or route"})
                return
            text = tokenizer.apply_chat_template(
                body["messages"],
                add_generation_prompt=body.get("add_generation_prompt", True),
                continue_final_message=body.get("continue_final_message", False),
                tokenize=False,
                **({"chat_template": template} if template else {}),
                **body.get("chat_template_kwargs", {}),
            )
            ids = tokenizer(text, add_special_tokens=False).input_ids
            reply_parts = answer(ids)  # the content, or a reasoning model's reply (see the docstring)
            parts = reply_parts if isinstance(reply_parts, dict) else {"content": reply_parts}
            content = parts.get("content")
            logprobs = [{"token": t, "logprob": logprob} for t in tokenizer.tokenize(content or "")]
            message = {"role": "assistant", "content": content}
            message |= {k: parts[k] for k in ("reasoning_content", "reasoning") if k in parts}
            choice = {"index": 0, "message": message, "finish_reason": parts.get("finish_reason", "stop")}
            choice |= {"token_ids": parts["token_ids"]} if "token_ids" in parts else {}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": logprobs}
            usage = {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}
            if "reasoning_tokens" in parts:
                usage["completion_tokens_details"] = {"reasoning_tokens": parts["reasoning_tokens"]}
            reply = {"object": "chat.completion", "choices": [choice], "usage": usage}
            self._send(200, {**reply, "prompt_token_ids": ids} if report_ids else reply)

    return ChatHandler


class FakeChatServer(FakeServer):
    """``with FakeChatServer(tokenizer, "tiny", answer) as url: ...`` serves on a free loopback port."""

    def __init__(
        self,
        tokenizer,
        name: str,
        answer: Callable[[list[int]], str | dict],
        report_ids: bool = True,
        logprob: float = -0.5,
        template: str | None = None,
    ):
        super().__init__(None, name)
        self.httpd.RequestHandlerClass = make_chat_handler(
            tokenizer, name, answer, report_ids, logprob, template
        )
        self.httpd.bodies = []

    @property
    def bodies(self) -> list[dict]:
        """The JSON body of every POST so far."""
        return self.httpd.bodies
