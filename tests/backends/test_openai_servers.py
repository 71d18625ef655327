"""Several OpenAI-compatible servers at once (two loopback fakes): exactly the cells of one server,
requests on both, never more than ``--max-concurrent`` in flight on either, every server recorded,
and one line for a server that fails or for bad options."""

from __future__ import annotations

import json

import pytest
from fake_completions import FakeServer
from test_gate_cli import invoke

PPL = ["--lengths", "16,32", "--stride", "16", "--doc-tokens", "128", "--num-docs", "2", "--batch-size", "4"]
PASSKEY = ["--lengths", "200", "--samples", "8", "--max-new-tokens", "6"]


def _run(capsys, task: str, model_dir, output, urls, *extra):
    """``task`` (``ppl`` on ``--dataset`` given in ``extra``, or ``passkey``) over the servers ``urls``."""
    task_args = PPL if task == "ppl" else PASSKEY
    servers = [arg for url in urls for arg in ("--base-url", url)]
    return invoke(capsys, task, "--model", model_dir, *task_args, "--output", output, "--backend", "openai",
                  *servers, *extra)  # fmt: skip


def _cells(path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def _one_line(result, *fragments: str) -> str:
    """The last stderr line is the error (progress lines may precede it), exit 2, no traceback."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and lines[-1].startswith("coca-eval: error:"), result.stderr
    for fragment in fragments:
        assert fragment in lines[-1], (fragment, lines[-1])
    return lines[-1]


def test_ppl_over_two_servers_gives_the_cells_of_one(
    capsys, served_model, tiny_llama_bos_dir, corpus_file, tmp_path
):
    with FakeServer(served_model, "tiny") as url:
        one = _run(capsys, "ppl", tiny_llama_bos_dir, tmp_path / "one.json", [url], "--dataset", corpus_file)
    assert one.returncode == 0, one.stderr[-2000:]
    single = _cells(tmp_path / "one.json")
    first, second = FakeServer(served_model, "tiny", delay=0.05), FakeServer(served_model, "tiny", delay=0.05)
    with first as url_a, second as url_b:
        two = _run(
            capsys, "ppl", tiny_llama_bos_dir, tmp_path / "two.json", [url_a, url_b],
            "--dataset", corpus_file, "--max-concurrent", "2",
        )  # fmt: skip
        asked = first.completions() + second.completions()
        # the one-server run's journal with two servers: the cell keys match, nothing is asked again
        resumed = _run(
            capsys, "ppl", tiny_llama_bos_dir, tmp_path / "one.json", [url_a, url_b],
            "--dataset", corpus_file, "--max-concurrent", "2",
        )  # fmt: skip
    assert two.returncode == 0 and resumed.returncode == 0, two.stderr[-2000:] + resumed.stderr[-2000:]
    assert _cells(tmp_path / "two.json") == single == _cells(tmp_path / "one.json")
    assert [cell["status"] for cell in single] == ["ok", "ok"]
    assert first.completions() > 0 and second.completions() > 0
    assert first.completions() + second.completions() == asked
    assert first.peak == second.peak == 2  # a batch of 4 windows: two pieces on each server at once
    config = json.loads((tmp_path / "two.json").read_text())["config"]
    assert config["engine"]["base_urls"] == [url_a, url_b] and config["engine"]["max_concurrent"] == 2
    assert [note["base_urls"] for note in config["backends"].values()] == [[url_a, url_b]]


def test_passkey_over_two_servers_keeps_each_to_its_bound(
    capsys, monkeypatch, served_model, tiny_llama_bos_dir, tmp_path
):
    with FakeServer(served_model, "tiny", eos=1) as url:
        one = _run(capsys, "passkey", tiny_llama_bos_dir, tmp_path / "one.json", [url])
    assert one.returncode == 0, one.stderr[-2000:]
    monkeypatch.setattr("coca_eval.backends.openai.BATCH", 1)  # one prompt a request: 4 per server
    first, second = (FakeServer(served_model, "tiny", eos=1, delay=0.1) for _ in range(2))
    with first as url_a, second as url_b:
        two = _run(
            capsys, "passkey", tiny_llama_bos_dir, tmp_path / "two.json", [url_a, url_b],
            "--max-concurrent", "2",
        )  # fmt: skip
    assert two.returncode == 0, two.stderr[-2000:]
    assert _cells(tmp_path / "two.json") == _cells(tmp_path / "one.json")
    samples = _cells(tmp_path / "two.json")[0]["detail"]["samples"]
    assert [sample["index"] for sample in samples] == list(range(8))
    assert first.completions() == second.completions() == 4
    assert first.peak == second.peak == 2  # four requests each, never more than two at once


def test_a_server_that_fails_for_good_ends_the_run_naming_it(
    capsys, sleeps, served_model, tiny_llama_bos_dir, corpus_file, tmp_path
):
    def overloaded(path, status, body):
        return (503, {"error": "overloaded"}) if path == "/v1/completions" else (status, body)

    healthy, failing = FakeServer(served_model, "tiny"), FakeServer(served_model, "tiny", rewrite=overloaded)
    with healthy as url_a, failing as url_b:
        secret_b = url_b.replace("http://", "http://bob:s3cret@")
        result = _run(capsys, "ppl", tiny_llama_bos_dir, tmp_path / "run.json", [url_a, secret_b],
                      "--dataset", corpus_file, "--batch-size", "1")  # fmt: skip
    _one_line(result, f"server {url_b} answered 503 on /completions", "gave up after 4 attempts")
    assert sleeps == [1.0, 2.0, 4.0]  # the client's retries, then the run stops
    assert healthy.completions() == 1 and failing.completions() == 4  # windows 1 and 2, in turn
    assert "s3cret" not in result.stderr


def test_a_second_server_that_is_down_is_one_line_before_anything_runs(
    capsys, served_model, tiny_llama_bos_dir, tmp_path
):
    with FakeServer(served_model, "tiny") as url:
        result = _run(
            capsys, "passkey", tiny_llama_bos_dir, tmp_path / "o" / "x.json", [url, "http://127.0.0.1:9/v1"]
        )
    assert _one_line(result, "cannot reach --base-url http://127.0.0.1:9/v1") == result.stderr.strip()
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("urls", "extra", "message"),
    [
        (
            ["http://127.0.0.1:9/v1"],
            ["--max-concurrent", "0"],
            "--max-concurrent must be a positive integer (got 0)",
        ),
        (["http://127.0.0.1:9/v1", "127.0.0.1:8001/v1"], [], "--base-url must be an http:// or https:// URL"),
        (
            ["http://a:pw@127.0.0.1:9/v1", "http://127.0.0.1:9/v1/"],
            [],
            "--base-url names the same server twice",
        ),
    ],
)
def test_bad_server_options_are_one_line(capsys, tiny_llama_bos_dir, tmp_path, urls, extra, message):
    result = _run(capsys, "passkey", tiny_llama_bos_dir, tmp_path / "o" / "x.json", urls, *extra)
    assert _one_line(result, message) == result.stderr.strip()  # the only line
    assert "pw@" not in result.stderr and not (tmp_path / "o").exists()
