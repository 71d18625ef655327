"""``--dump-prompts``: every family's runs dump one row per sample with the prompt the model saw, and
the run itself is unchanged (its results equal the committed runs made without a dump)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.generation.preset_runs import RUNS, computed, run_preset

COMMITTED = Path(__file__).parent / "data" / "preset_runs"
FAMILY = {
    "ruler-quick": "ruler",
    "passkey-quick": "passkey",
    "helmet-quick": "helmet",
    "babilong-quick": "babilong",
}


def answer_budget(cell: dict) -> int:
    """What N holds besides the prompt: the cell's answer budget where N counts it (passkey's N is the
    prompt alone)."""
    detail = cell["detail"]
    return detail["answer_budget"] if detail.get("length_counts") == "prompt+answer" else 0


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_sample_is_dumped_as_the_model_saw_it_and_the_run_is_unchanged(name, tmp_path, monkeypatch):
    from transformers import AutoTokenizer

    from coca_eval.models.presets import resolve_model

    monkeypatch.chdir(tmp_path)
    result = run_preset(name, tmp_path / "run.json", "--dump-prompts", str(tmp_path / "prompts"))
    assert result.exit_code == 0, result.output
    assert computed(tmp_path / "run.json") == json.loads((COMMITTED / f"{name}.json").read_text())

    rows = [json.loads(line) for line in (tmp_path / "prompts" / f"{FAMILY[name]}.jsonl").open()]
    run = json.loads((tmp_path / "run.json").read_text())
    expected = {
        (cell.get("dataset") or "passkey", cell["length"], sample["index"]): (cell, sample)
        for cell in run["cells"]
        for sample in cell["detail"]["samples"]
    }
    assert sorted((r["task"], r["length"], r["index"]) for r in rows) == sorted(expected)
    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2-135m")[0])
    for row in rows:
        cell, sample = expected[row["task"], row["length"], row["index"]]
        references = sample["answers"] if "answers" in sample else [str(sample["key"])]
        assert row["answers"] == references
        assert row["prompt_tokens"] == len(row["prompt_ids"]) == row["length"] - answer_budget(cell)
        text = tokenizer.decode(
            row["prompt_ids"], skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        assert row["prompt"] == text
        # the text read again comes within a few tokens of the ids (pieces merge at their boundaries)
        again = len(tokenizer(row["prompt"], add_special_tokens=False).input_ids)
        assert abs(again - row["prompt_tokens"]) <= 0.03 * row["prompt_tokens"]


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_dump_folder_that_is_a_file_or_a_link_is_refused_before_anything_runs(kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    taken = tmp_path / "taken"
    if kind == "file":
        taken.write_text("")
    else:
        taken.symlink_to(tmp_path / "elsewhere")  # a link would carry the prompts out of where asked
    from coca_eval.errors import CocaEvalError

    result = run_preset("ruler-quick", tmp_path / "run.json", "--dump-prompts", str(taken))
    # click refuses a file itself (exit 2); the link is the harness's one-line refusal (exit 2 in main)
    refusal = result.output if result.exit_code == 2 else str(result.exception)
    assert result.exit_code == 2 or isinstance(result.exception, CocaEvalError)
    assert "--dump-prompts" in refusal
    assert not (tmp_path / "run.json").exists() and not list((tmp_path / "elsewhere").iterdir())
