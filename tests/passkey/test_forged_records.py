"""A passkey journal part or results cell whose ``correct`` is not what its output earns is never
believed: the part is answered again, the results file refused on load."""

import json

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.errors import CocaEvalError
from coca_eval.methods import make_method
from coca_eval.passkey.params import make_passkey_params
from coca_eval.taskspec import load_checked_run


def _run(path, model):
    params = make_passkey_params({"samples": 4, "lengths": "200", "max_new_tokens": 4})
    method = make_method(str(model), "none", "tiny", "float32", "hf")
    return evaluate("passkey", [method], params, path, Runtime())


def _entries(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_forged_part_is_answered_again(tmp_path, tiny_llama_dir):
    out = tmp_path / "run.json"
    first = _run(out, tiny_llama_dir)
    assert first.cells[0].value < 1.0  # a random tiny model misses some keys
    journal = out.with_suffix(".journal.jsonl")
    parts = [e for e in _entries(journal) if e["kind"] == "part"]
    forged = [e for e in parts if not e["data"]["correct"]]
    for entry in forged:
        entry["data"]["correct"] = True
    journal.write_text("".join(json.dumps(e) + "\n" for e in parts))  # the parts alone: cells re-formed
    rerun = _run(out, tiny_llama_dir)
    assert rerun.cells[0].value == first.cells[0].value
    answered = [e for e in _entries(journal)[len(parts) :] if e["kind"] == "part"]
    assert sorted(e["part"] for e in answered) == sorted(e["part"] for e in forged)


def test_a_cell_its_samples_contradict_is_refused_on_load(tmp_path, tiny_llama_dir):
    out = tmp_path / "run.json"
    _run(out, tiny_llama_dir)
    raw = json.loads(out.read_text())
    raw["cells"][0]["value"] = 1.0
    out.write_text(json.dumps(raw))
    with pytest.raises(CocaEvalError, match="contradicts itself at cells.0: the value is 1.0 but its 4 "):
        load_checked_run(out)
    for sample in raw["cells"][0]["detail"]["samples"]:
        sample["correct"] = True
    out.write_text(json.dumps(raw))
    with pytest.raises(CocaEvalError, match=r"sample \d is scored True but its output"):
        load_checked_run(out)
