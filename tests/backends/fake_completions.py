"""A tiny OpenAI-compatible completions server on 127.0.0.1 backed by a transformers model.

It answers the two routes the openai backend uses, the way vLLM does: greedy completions of token-id
prompts with ``token_id:N`` tokens, and echoed prompt log-probs. The answers come from plain
``model(...)`` calls, independent of the backends under test.
"""

from __future__ import annotations

import json
import threading
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


def make_handler(model, name: str, eos: int | None, echo_supported: bool = True):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model"}]})
            else:
                self._send(404, {"error": "no route"})

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/completions" or request.get("model") != name:
                self._send(404, {"error": "no such model or route"})
                return
            choices = []
            for index, prompt in enumerate(request["prompt"]):
                if request.get("echo"):
                    logprobs = {"token_logprobs": _prompt_logprobs(model, prompt)} if echo_supported else None
                    choices.append({"index": index, "text": "", "logprobs": logprobs})
                else:
                    tokens = _greedy(model, prompt, request["max_tokens"], eos)
                    logprobs = {"tokens": [f"token_id:{t}" for t in tokens]}
                    choices.append({"index": index, "text": "", "logprobs": logprobs})
            self._send(200, {"object": "text_completion", "choices": choices})

    return Handler


class FakeServer:
    """Context manager: ``with FakeServer(model, "tiny") as url: ...`` serves on a free loopback port."""

    def __init__(self, model, name: str, eos: int | None = None, echo_supported: bool = True) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(model, name, eos, echo_supported))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
