"""Doubles for AA-LCR runs, none of the family's code involved: a backend that answers the smoke set's
questions found in its prompt (the official answer to the odd question ids, "I cannot tell" to the
even), and a fake OpenAI-compatible judge server whose verdicts are scripted per question, which counts
the calls it answers and can hold a question's call past any timeout."""

from __future__ import annotations

import contextlib
import csv
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.generation.digest_backend import AnsweringBackend

SMOKE = Path(__file__).parents[2] / "coca_eval" / "aa_lcr" / "smoke" / "AA-LCR_Dataset.csv"


def smoke_rows() -> list[dict]:
    with SMOKE.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


class AaLcrOracle(AnsweringBackend):
    fingerprint = "aa-lcr-oracle"

    def answer(self, prompt) -> list[int]:
        text = self.tokenizer.decode(list(prompt), skip_special_tokens=True)
        asked = text.split("START QUESTION")[-1]
        for row in smoke_rows():
            if row["question"] in asked:
                reply = row["answer"] if int(row["question_id"]) % 2 else "I cannot tell."
                return self.tokenizer(reply, add_special_tokens=False).input_ids + [
                    self.tokenizer.eos_token_id
                ]
        return self.tokenizer("no question found", add_special_tokens=False).input_ids


load = AaLcrOracle.load


def register() -> None:
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "aa-lcr-oracle" not in BACKENDS:
        BACKENDS.add(
            "aa-lcr-oracle", BackendEntry("tests.aa_lcr.aa_lcr_doubles:load", "answers the smoke set")
        )


class FakeJudge:
    """A judge server on 127.0.0.1: ``verdicts`` maps a question's text to the reply it gets (the
    judge prompt quotes the question); ``hang`` holds the calls on those questions ``hold`` seconds."""

    def __init__(self, verdicts: dict[str, str], model: str = "judge-model") -> None:
        self.verdicts, self.model, self.calls, self.hang, self.hold = verdicts, model, [], set(), 5.0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, messages: list[dict]) -> str:
        prompt = messages[-1]["content"]
        for question, verdict in self.verdicts.items():
            if question in prompt:
                if question in self.hang:
                    time.sleep(self.hold)
                return verdict
        return "no idea"

    def _handler(self):
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": judge.model, "object": "model"}]})

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                judge.calls.append(request)
                text = judge.reply(request["messages"])
                self._send({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})

        return Handler
