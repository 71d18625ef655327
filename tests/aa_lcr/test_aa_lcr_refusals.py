"""What ``coca-eval aa-lcr`` refuses before any model loads, in one line, exit 2: a judge URL that does
not answer, a judge name that is no model, a server that does not serve the model asked for, no judge
at all, a data folder without the published table, and an unknown judge protocol."""

from __future__ import annotations

import socket

import pytest

from coca_eval.cli import main
from tests.aa_lcr import aa_lcr_doubles
from tests.aa_lcr.aa_lcr_doubles import FakeJudge


@pytest.fixture(autouse=True)
def no_model_loads(monkeypatch):
    aa_lcr_doubles.register()

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(aa_lcr_doubles.AaLcrOracle, "load", classmethod(refuse))
    monkeypatch.setattr("coca_eval.backends.hf.load_hf_backend", refuse)


def _refused(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["aa-lcr", "--model", "zoo-rope", "--backend", "aa-lcr-oracle", "--lengths", "1k", *args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    return err


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_judge_url_that_does_not_answer(capsys):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    assert f"--judge {url} does not answer" in _refused(capsys, "--judge", url)


def test_an_unknown_judge_name(capsys):
    err = _refused(capsys, "--judge", "no-such-judge-model")
    assert "--judge no-such-judge-model" in err and "unknown model" in err


def test_a_judge_directory_that_does_not_exist(capsys):
    assert "model directory not found" in _refused(capsys, "--judge", "/nonexistent/judge")


def test_a_server_without_the_model_asked_for(capsys):
    server = FakeJudge({})
    try:
        err = _refused(capsys, "--judge", f"{server.url}#other-model")
    finally:
        server.close()
    assert "serves no 'other-model'" in err and "judge-model" in err


def test_no_judge(capsys):
    assert "give --judge MODEL" in _refused(capsys, "--preset", "aa-lcr", "--data", "smoke")


def test_a_folder_without_the_published_table(capsys, tmp_path):
    server = FakeJudge({})
    try:
        err = _refused(capsys, "--judge", server.url, "--data", str(tmp_path))
    finally:
        server.close()
    assert "no AA-LCR_Dataset.csv" in err


def test_an_unknown_judge_protocol(capsys):
    assert "--judge-protocol" in _refused(capsys, "--judge", "x", "--judge-protocol", "2.0")


def test_a_refusal_never_shows_the_credentials_of_a_judge_url(capsys):
    port = _closed_port()
    err = _refused(capsys, "--judge", f"http://user:secret@127.0.0.1:{port}/v1")
    assert "does not answer" in err and "secret" not in err and f"127.0.0.1:{port}" in err
