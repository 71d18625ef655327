"""Whole ``mrcr`` runs through the CLI on the zoo's tokenizer and a backend double that reads each
prompt's rendered conversation and repeats the wanted turn: every generated prompt is exactly N minus
the answer budget (read back from ``--dump-prompts``), every reference is the random string followed
by the k-th answer to the needles' request, chat template on and off; a rerun resumes with nothing to
decode; the next needle's answer scores what the grading gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval.cli import cli, main
from coca_eval.mrcr.scoring import grade
from tests.mrcr import mrcr_oracle_backend
from tests.mrcr.mrcr_oracle_backend import TEMPLATE, wanted

BUDGET = 96


def _invoke(*args: str):
    mrcr_oracle_backend.register()
    return CliRunner().invoke(cli, ["mrcr", "--model", "zoo-rope", "--backend", "mrcr-oracle", *args])


def _dumped(dump: Path) -> list[dict]:
    return [json.loads(line) for line in (dump / "mrcr.jsonl").read_text().splitlines()]


def test_generated_conversations_are_exact_and_their_answers_are_the_wanted_turns(tmp_path):
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    dump = tmp_path / "prompts"
    args = ("--needles", "2,4", "--lengths", "1k,2k", "--samples", "3", "--chat-template", str(template))
    result = _invoke(*args, "--output", str(tmp_path / "run.json"), "--dump-prompts", str(dump))
    assert result.exit_code == 0, result.output
    rows = _dumped(dump)
    assert len(rows) == 2 * 2 * 3
    for row in rows:
        assert row["prompt_tokens"] == len(row["prompt_ids"]) == row["length"] - BUDGET
        prefix, answers, number = wanted(row["prompt"].replace("<|endoftext|>", ""))
        assert len(answers) == int(row["task"][0]) and 1 <= number <= len(answers)
        assert row["answers"] == [prefix + answers[number - 1]], row["index"]
    run = json.loads((tmp_path / "run.json").read_text())
    assert [c["value"] for c in run["cells"]] == [100.0] * 4
    sample = run["cells"][0]["detail"]["samples"][0]
    assert len(sample["needle_turns"]) == 2 and sample["turns"] > 2 and 0 < sample["depths"][0] < 1
    assert run["cells"][0]["detail"]["conversation"] == "chat template"


def test_without_a_template_the_conversation_is_a_plain_transcript(tmp_path):
    dump = tmp_path / "prompts"
    args = ("--needles", "2", "--lengths", "1k", "--samples", "2", "--chat-template", "none")
    result = _invoke(*args, "--output", str(tmp_path / "run.json"), "--dump-prompts", str(dump))
    assert result.exit_code == 0, result.output
    for row in _dumped(dump):
        assert row["prompt_tokens"] == row["length"] - BUDGET
        assert row["prompt"].count("\n\nAssistant:\n") >= 2 and row["prompt"].endswith("Assistant:\n")
    cell = json.loads((tmp_path / "run.json").read_text())["cells"][0]
    assert cell["detail"]["conversation"] == "plain transcript" and cell["detail"]["chat_template"] == "none"


def test_a_template_that_frames_turns_unevenly_still_gives_exact_lengths(tmp_path):
    numbered = tmp_path / "numbered.jinja"  # "### user 9:" then "### user 10:": frames grow as turns go on
    numbered.write_text(TEMPLATE.replace("{{ m['role'] }}:", "{{ m['role'] }} {{ loop.index }}:"))
    dump = tmp_path / "prompts"
    args = ("--needles", "4", "--lengths", "2k", "--samples", "3", "--chat-template", str(numbered))
    result = _invoke(*args, "--output", str(tmp_path / "run.json"), "--dump-prompts", str(dump))
    assert result.exit_code == 0, result.output
    assert {row["prompt_tokens"] for row in _dumped(dump)} == {2048 - BUDGET}
    assert json.loads((tmp_path / "run.json").read_text())["cells"][0]["value"] == 100.0


def test_a_rerun_resumes_and_the_next_needle_scores_as_graded(tmp_path, monkeypatch):
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    output = tmp_path / "run.json"
    args = ("--needles", "2", "--lengths", "1k", "--samples", "3", "--chat-template", str(template))
    assert _invoke(*args, "--output", str(output)).exit_code == 0
    first = json.loads(output.read_text())
    calls = []
    monkeypatch.setattr(mrcr_oracle_backend.MrcrOracle, "generate_greedy", lambda *a, **k: calls.append(a))
    assert _invoke(*args, "--output", str(output)).exit_code == 0
    assert not calls and json.loads(output.read_text())["cells"] == first["cells"]
    monkeypatch.undo()
    mrcr_oracle_backend.WRONG.add("2needle")
    try:
        assert _invoke(*args, "--output", str(tmp_path / "wrong.json")).exit_code == 0
    finally:
        mrcr_oracle_backend.WRONG.clear()
    cell = json.loads((tmp_path / "wrong.json").read_text())["cells"][0]
    for sample in cell["detail"]["samples"]:
        assert sample["output"] != sample["answers"][0]
        assert sample["score"] == grade(sample["output"], sample["answers"][0], sample["prefix"]) < 1
    assert cell["value"] < 100


def test_a_length_too_short_for_the_needles_is_an_error_cell_naming_why(tmp_path, capsys):
    mrcr_oracle_backend.register()
    args = ["mrcr", "--model", "zoo-rope", "--backend", "mrcr-oracle", "--needles", "8", "--lengths", "512",
            "--samples", "1", "--chat-template", "none", "--output", str(tmp_path / "run.json")]  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    assert "8needle: 8 needles, a distractor and the final request need" in capsys.readouterr().err


def test_a_length_below_the_fixed_parts_is_one_line_before_any_model_loads(tmp_path, capsys):
    args = ["mrcr", "--model", str(tmp_path / "absent"), "--needles", "8", "--lengths", "300"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "length 300 is below the shortest mrcr can build" in err and "8needle" in err


def test_the_quick_preset_is_offline_and_names_its_model():
    from coca_eval.presets import get_preset

    preset = get_preset("mrcr-quick", task="mrcr")
    assert preset.params["source"] == "generate" and preset.methods == ({"model": "smollm2-135m"},)
    assert Path(preset.path).name == "mrcr_quick.yaml"
