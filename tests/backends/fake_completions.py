"""A tiny OpenAI-compatible completions server on 127.0.0.1 backed by a transformers model.

It answers the two routes the openai backend uses, the way vLLM does: greedy completions of token-id
prompts with ``token_id:N`` tokens, and echoed prompt log-probs. The answers come from plain
``model(...)`` calls, independent of the backends under test.

For fault tests it records every request (``server.requests``: path with query, headers), can demand
an API key (401 without ``Authorization: Bearer <key>``), and ``rewrite(route, status, body)`` can turn
any answer into another ``(status, body)``: a body of bytes goes out as it is, ``None`` drops the
connection without an answer.

For tests of several servers it counts the completions requests it is working on at once
(``server.peak``, the most there ever were) and can hold each one ``delay`` seconds, so requests
sent together really overlap.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch


def _greedy(model, prompt: list[int], max_tokens: int, eos: int | None) -> list[int]:
    ids, out = list(prompt), []
    with torch.inference_mode():
        for _ in range(max_tokens):
            token = int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
            out.append(token)
            ids.append(token)
            if token == eos:
                break
    return out


def _prompt_logprobs(model, prompt: list[int]) -> list[float | None]:
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([prompt])).logits[0].double(), -1)  # [N, V]
    return [None] + [float(logp[j - 1, prompt[j]]) for j in range(1, len(prompt))]


def _choice(model, prompt: list[int], request: dict, eos: int | None, echo_supported: bool) -> dict:
    if request.get("echo"):
        logprobs = {"token_logprobs": _prompt_logprobs(model, prompt)} if echo_supported else None
        return {"text": "", "logprobs": logprobs}
    tokens = _greedy(model, prompt, request["max_tokens"], eos)
    chosen = _prompt_logprobs(model, [*prompt, *tokens])[len(prompt) :]  # each answer token's log-prob
    return {"text": "", "logprobs": {"tokens": [f"token_id:{t}" for t in tokens], "token_logprobs": chosen}}


class InFlight:
    """How many requests are being worked on now, and the most there ever were (thread-safe)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay, self.now, self.peak = delay, 0, 0
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.delay)

    def __exit__(self, *exc) -> None:
        with self._lock:
            self.now -= 1


def make_handler(model, name: str, eos: int | None, echo_supported=True, rewrite=None, api_key=None):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def _send(self, code: int, body) -> None:
            route = urllib.parse.urlsplit(self.path).path
            if rewrite is not None:
                code, body = rewrite(route, code, body)
            if body is None:
                self.close_connection = True
                return
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _admitted(self) -> bool:
            self.server.requests.append((self.path, dict(self.headers)))
            if api_key is not None and self.headers.get("Authorization") != f"Bearer {api_key}":
                self._send(401, {"error": "invalid API key"})
                return False
            return True

        def do_GET(self) -> None:
            if not self._admitted():
                return
            if urllib.parse.urlsplit(self.path).path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
            else:
                self._send(404, {"error": "no route"})

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if not self._admitted():
                return
            route = urllib.parse.urlsplit(self.path).path
            if route != "/v1/completions" or request.get("model") != name:
                self._send(404, {"error": "no such model or route"})
                return
            with self.server.in_flight:
                choices = [
                    {"index": index, **_choice(model, prompt, request, eos, echo_supported)}
                    for index, prompt in enumerate(request["prompt"])
                ]
            self._send(200, {"object": "text_completion", "choices": choices})

    return Handler


class FakeServer:
    """Context manager: ``with FakeServer(model, "tiny") as url: ...`` serves on a free loopback port."""

    def __init__(
        self,
        model,
        name: str,
        eos: int | None = None,
        echo_supported=True,
        rewrite=None,
        api_key=None,
        delay: float = 0.0,
    ):
        handler = make_handler(model, name, eos, echo_supported, rewrite, api_key)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.requests = []
        self.httpd.in_flight = InFlight(delay)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def requests(self) -> list[tuple[str, dict]]:
        """(path with query, headers) of every request so far."""
        return self.httpd.requests

    @property
    def peak(self) -> int:
        """The most completions requests this server worked on at once."""
        return self.httpd.in_flight.peak

    def completions(self) -> int:
        """How many completions requests reached this server."""
        return sum(urllib.parse.urlsplit(path).path == "/v1/completions" for path, _ in self.requests)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
