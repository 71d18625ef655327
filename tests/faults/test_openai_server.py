"""Item 13: what an OpenAI-compatible server can get wrong is one line and exit 2, finished documents
stay journaled, and the API key and the URL's credentials never reach a file or the terminal."""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_error_after_progress, assert_one_line_error, journal_entries
from test_gate_cli import invoke

from tests.backends.fake_completions import FakeServer

KEY = "sk-live-7f3a9c0e55"
QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "128", "--num-docs", "2"]  # 4 windows a doc


def _ppl(capsys, model_dir, corpus_file, url, output, *extra):
    args = ["ppl", "--model", model_dir, "--dataset", corpus_file, *QUICK, "--output", output]
    return invoke(capsys, *args, "--backend", "openai", "--base-url", url, *extra)


def _drop_index(body: dict) -> dict:
    return {"choices": [{k: v for k, v in c.items() if k != "index"} for c in body["choices"]]}


def _short_logprobs(body: dict) -> dict:
    for choice in body["choices"]:
        choice["logprobs"]["token_logprobs"] = choice["logprobs"]["token_logprobs"][:3]
    return body


MANGLED = {  # case: (route, body -> what the server sends instead, what the one line says)
    "a list": ("/v1/completions", lambda body: body["choices"], "is a list, not a JSON object"),
    "no choices": ("/v1/completions", lambda body: {"object": "text_completion"}, "malformed: no 'choices'"),
    "choice without index": ("/v1/completions", _drop_index, "malformed: choices[0] has no 'index'"),
    "not JSON": ("/v1/completions", lambda body: b"<html>502 proxy</html>", "text that is not JSON"),
    "short echo": ("/v1/completions", _short_logprobs, "returned 3 prompt log-probs for a prompt of"),
    "model without id": ("/v1/models", lambda body: {"data": [{"object": "model"}]}, "data[0] has no 'id'"),
}


@pytest.mark.parametrize("case", sorted(MANGLED))
def test_a_malformed_reply_is_one_line(tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, case):
    route, mangle, message = MANGLED[case]

    def rewrite(path, status, body):
        return (status, mangle(body)) if path == route else (status, body)

    with FakeServer(served_model, "tiny", rewrite=rewrite) as url:
        result = _ppl(capsys, tiny_llama_bos_dir, corpus_file, url, tmp_path / "run.json")
    assert_error_after_progress(result, 2, message, url)
    assert "cannot reach" not in result.stderr
    if route == "/v1/models":  # checked before any model loads or journal is written
        assert_one_line_error(result, 2)
        assert not (tmp_path / "run.journal.jsonl").exists()


def test_a_server_that_fails_mid_run_keeps_the_finished_documents(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file, sleeps
):
    answered = []

    def fail_after_one_document(path, status, body):
        answered.append(path)
        late = answered.count("/v1/completions") > 4
        return (503, {"error": "overloaded"}) if path == "/v1/completions" and late else (status, body)

    out = tmp_path / "run.json"
    with FakeServer(served_model, "tiny", rewrite=fail_after_one_document) as url:
        failed = _ppl(capsys, tiny_llama_bos_dir, corpus_file, url, out)
    assert_error_after_progress(failed, 2, "answered 503 on /completions", "gave up after 4 attempts")
    assert sleeps == [1.0, 2.0, 4.0]
    parts = [e for e in journal_entries(tmp_path / "run.journal.jsonl") if e["kind"] == "part"]
    assert [p["part"] for p in parts] == ["0"]
    healthy = FakeServer(served_model, "tiny")
    with healthy as url:
        resumed = _ppl(capsys, tiny_llama_bos_dir, corpus_file, url, out)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert [path for path, _ in healthy.requests].count("/v1/completions") == 4  # the second document's
    assert json.loads(out.read_text())["cells"][0]["n"] == 256


def test_the_api_key_is_sent_and_never_written(
    tmp_path, capsys, monkeypatch, served_model, tiny_llama_bos_dir, corpus_file
):
    monkeypatch.setenv("TEAM_LLM_KEY", KEY)
    server = FakeServer(served_model, "tiny", api_key=KEY)
    with server as url:
        refused = _ppl(capsys, tiny_llama_bos_dir, corpus_file, url, tmp_path / "a.json")
        served = _ppl(
            capsys, tiny_llama_bos_dir, corpus_file, url, tmp_path / "b.json", "--api-key-env", "TEAM_LLM_KEY"
        )
    assert_one_line_error(refused, 2, "answered 401 on /models", "$OPENAI_API_KEY is unset")
    assert served.returncode == 0, served.stderr[-2000:]
    assert {headers.get("Authorization") for _, headers in server.requests[1:]} == {f"Bearer {KEY}"}
    written = [p.read_text() for p in tmp_path.iterdir() if p.is_file()]
    assert len(written) >= 2 and not any(KEY in text for text in written)
    assert KEY not in served.stdout + served.stderr + refused.stderr


def test_credentials_in_the_url_are_used_but_never_written(
    tmp_path, capsys, served_model, tiny_llama_bos_dir, corpus_file
):
    server = FakeServer(served_model, "tiny")
    with server as url:
        secret_url = url.replace("http://", "http://alice:hunter2@") + "?token=qtok-55aa"
        result = _ppl(capsys, tiny_llama_bos_dir, corpus_file, secret_url, tmp_path / "run.json")
    assert result.returncode == 0, result.stderr[-2000:]
    assert all(path.endswith("?token=qtok-55aa") for path, _ in server.requests)
    config = json.loads((tmp_path / "run.json").read_text())["config"]
    assert config["engine"]["base_urls"] == [url]
    assert [note["base_urls"] for note in config["backends"].values()] == [[url]]
    for text in [p.read_text() for p in tmp_path.iterdir() if p.is_file()] + [result.stdout + result.stderr]:
        assert "hunter2" not in text and "qtok-55aa" not in text


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--base-url", "127.0.0.1:8000/v1", "--base-url must be an http:// or https:// URL"),
        ("--api-key-env", KEY, "--api-key-env takes the name of an environment variable"),
    ],
)
def test_bad_server_options_are_one_line_before_anything_runs(
    tmp_path, capsys, tiny_llama_bos_dir, option, value, message
):
    args = [
        "passkey",
        "--model",
        tiny_llama_bos_dir,
        "--backend",
        "openai",
        "--output",
        tmp_path / "o" / "x.json",
    ]
    extra = (
        [option, value] if option == "--base-url" else [option, value, "--base-url", "http://127.0.0.1:9/v1"]
    )
    result = invoke(capsys, *args, *extra)
    assert_one_line_error(result, 2, message)
    assert KEY not in result.stderr and not (tmp_path / "o").exists()
