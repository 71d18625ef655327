"""Whole ``coca-eval aa-lcr`` runs on the smoke set, answered by a backend double and judged by a fake
OpenAI-compatible server with scripted verdicts: each sample's score is its scripted verdict (not the
truth of its answer), its judge prompt and reply are recorded, the judge's identity is in the run's
config and cells; a rerun asks the judge nothing (the reused calls counted); a killed run resumes
without re-asking the calls it had answered; a judge that does not answer in time makes an error cell
naming the question, never a 0, and its rerun decodes nothing again and asks the judge only that
question."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from tests.aa_lcr import aa_lcr_doubles
from tests.aa_lcr.aa_lcr_doubles import FakeJudge, smoke_rows

ARGS = (
    "--model", "zoo-rope", "--backend", "aa-lcr-oracle", "--chat-template", "none", "--lengths", "1k",
    "--judge-protocol", "1.1",
)  # fmt: skip


def _scripted() -> dict[str, str]:
    """Verdicts that disagree with the truth: CORRECT on the questions the oracle cannot answer."""
    return {
        row["question"]: '{"verdict": "%s"}' % ("INCORRECT" if int(row["question_id"]) % 2 else "CORRECT")
        for row in smoke_rows()
    }


@pytest.fixture
def judge():
    server = FakeJudge(_scripted())
    yield server
    server.close()


def _run(judge_url: str, output, *extra: str):
    aa_lcr_doubles.register()
    args = ["aa-lcr", *ARGS, "--judge", judge_url, "--samples", "6", "--answer-tokens", "32"]
    return CliRunner().invoke(cli, [*args, "--output", str(output), *extra])


def _failed(capsys, judge_url: str, output) -> str:
    """The command run through the entry point: exit 2, its error the last line on stderr (returned)."""
    aa_lcr_doubles.register()
    args = ["aa-lcr", *ARGS, "--judge", judge_url, "--samples", "6", "--answer-tokens", "32"]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--output", str(output)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_info.value.code == 2 and err.startswith("coca-eval: error: aa_lcr @ 1024: question"), err
    return err


def test_scores_are_the_scripted_verdicts_and_a_rerun_asks_nothing(judge, tmp_path):
    output = tmp_path / "run.json"
    result = _run(judge.url, output)
    assert result.exit_code == 0, result.output
    run = json.loads(output.read_text())
    assert run["config"]["params"]["judge_id"] == "server:judge-model"
    (cell,) = run["cells"]
    assert cell["detail"]["judge"] == run["config"]["params"]["judge_id"]
    scripted = _scripted()
    for sample in cell["detail"]["samples"]:
        expected = json.loads(scripted[sample["question"]])["verdict"]
        assert sample["verdict"] == expected
        assert sample["score"] == (1.0 if expected == "CORRECT" else 0.0)
        assert sample["judge_reply"] == scripted[sample["question"]]
        assert sample["output"] in sample["judge_prompt"][-1]["content"]
    assert cell["value"] == pytest.approx(50.0)
    assert cell["detail"]["judge_calls"] == {"asked": 6, "reused": 0}
    assert len(judge.calls) == 6 and all(c["temperature"] == 0 for c in judge.calls)
    output.unlink()  # the journal stays: a rerun resumes from it
    again = _run(judge.url, output)
    assert again.exit_code == 0, again.output
    assert len(judge.calls) == 6
    assert json.loads(output.read_text())["cells"][0]["value"] == pytest.approx(50.0)


def test_a_killed_run_resumes_without_asking_the_judge_again(judge, tmp_path, monkeypatch):
    from coca_eval.judging import judges

    output = tmp_path / "run.json"
    real = judges.Judge.ask
    asked: list[str] = []

    def dies_after_three(self, messages, sample):
        if len(asked) == 3:
            raise KeyboardInterrupt  # the run is killed between two judge calls
        asked.append(sample)
        return real(self, messages, sample)

    monkeypatch.setattr(judges.Judge, "ask", dies_after_three)
    killed = _run(judge.url, output)
    assert killed.exit_code != 0 and not output.exists()
    assert len(judge.calls) == 3
    monkeypatch.setattr(judges.Judge, "ask", real)
    resumed = _run(judge.url, output)
    assert resumed.exit_code == 0, resumed.output
    assert len(judge.calls) == 6  # the three answered calls were not asked again
    cell = json.loads(output.read_text())["cells"][0]
    calls = cell["detail"]["judge_calls"]
    assert calls["asked"] == 3 and calls["reused"] >= 3


def test_a_judge_that_times_out_makes_an_error_cell_naming_the_question(judge, tmp_path, monkeypatch, capsys):
    from coca_eval.judging import judges

    monkeypatch.setattr(judges, "JUDGE_TIMEOUT_S", 0.5)
    third = next(r for r in smoke_rows() if r["question_id"] == "3")
    judge.hang.add(third["question"])
    output = tmp_path / "run.json"
    err = _failed(capsys, judge.url, output)
    assert "question 3" in err and "judge gave no verdict" in err and "0.5 s" in err
    (cell,) = json.loads(output.read_text())["cells"]
    assert cell["status"] == "error" and cell["value"] is None
    assert "question 3" in cell["detail"]["error"]
    kept = cell["detail"].get("samples", [])
    assert all(s["question_id"] != "3" for s in kept)
    asked = len(judge.calls)
    judge.hang.clear()  # the judge answers again: the rerun decodes nothing, asks only question 3
    decoded = []
    monkeypatch.setattr(aa_lcr_doubles.AaLcrOracle, "generate_greedy", lambda *a, **k: decoded.append(a))
    result = _run(judge.url, output)
    assert result.exit_code == 0, result.output
    assert decoded == [] and len(judge.calls) == asked + 1
    (cell,) = json.loads(output.read_text())["cells"]
    assert cell["status"] == "ok" and cell["detail"]["judge_calls"] == {"asked": 1, "reused": 5}


def test_an_unparseable_verdict_is_an_error_cell(tmp_path, capsys):
    server = FakeJudge({row["question"]: "maybe" for row in smoke_rows()})
    try:
        err = _failed(capsys, server.url, tmp_path / "run.json")
    finally:
        server.close()
    assert "holds no JSON verdict" in err and "question 1" in err
    (cell,) = json.loads((tmp_path / "run.json").read_text())["cells"]
    assert cell["status"] == "error" and cell["value"] is None


def test_a_published_run_bins_questions_and_reports(judge, tmp_path):
    """Under ``published`` a length past every prompt holds every question; the report renders the run."""
    output = tmp_path / "run.json"
    aa_lcr_doubles.register()
    args = [
        "aa-lcr",
        *ARGS[:-4],
        "--protocol",
        "published",
        "--lengths",
        "1k,2k,8k",
        "--judge-protocol",
        "1.1",
    ]
    result = CliRunner().invoke(cli, [*args, "--judge", judge.url, "--samples", "6", "--output", str(output)])
    assert result.exit_code == 0, result.output
    cells = json.loads(output.read_text())["cells"]
    assert [c["status"] for c in cells] == ["ok"] * 3
    longest = cells[-1]["detail"]
    assert sorted(s["question_id"] for s in longest["samples"]) == ["1", "2", "3", "4", "5", "6"]
    assert all(c["detail"]["length_counts"] == "prompt" for c in cells) and longest["left_out"] == 0
    assert [c["n"] for c in cells] == sorted(c["n"] for c in cells)
    report = CliRunner().invoke(cli, ["report", str(output), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert "AA-LCR" in "".join(p.read_text() for p in (tmp_path / "report").rglob("*.md"))
