"""`coca-eval gate` on LongPPL runs of tiny models: a rerun passes, a model that is worse on the key
tokens fails, and a candidate judged on another key-token set is refused (exit 2, one line).

The key tokens are judged by a fixed evaluator, the baseline model's own weights, with a bound below
the loss of a uniform prediction: so every key token is one the baseline predicts better than
uniformly, and a candidate that predicts uniformly (its output layer zeroed) is worse on each.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from test_gate_cli import invoke
from tiny_models import make_tiny_llama

from coca_eval.api import Runtime, evaluate
from coca_eval.methods import make_method
from coca_eval.ppl.longppl.params import make_longppl_params

RULE = {"short": 24, "step": 10, "bound": 5.6, "margin": 0.02}  # below log(320) = 5.77, a uniform loss


def _run(out, model, corpus, **extra):
    values = {"dataset": str(corpus), "num_docs": 6, "doc_tokens": 128, "lengths": "16,96", **RULE, **extra}
    method = make_method(str(model), "none", None, "float32", "hf")
    evaluate("longppl", [method], make_longppl_params(values), out, Runtime())
    return out


@pytest.fixture(scope="module")
def uniform_dir(tiny_llama_dir, tmp_path_factory):
    """The tiny LLaMA with its output layer zeroed: every token gets probability 1 / vocabulary."""
    import torch
    from transformers import AutoModelForCausalLM

    directory = tmp_path_factory.mktemp("uniform")
    shutil.copytree(tiny_llama_dir, directory, dirs_exist_ok=True)
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    model.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def baseline(tiny_llama_dir, corpus_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("baseline") / "base.json"
    return _run(out, tiny_llama_dir, corpus_file, evaluator_model=str(tiny_llama_dir))


@pytest.fixture
def gate(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")

    def run(base, cand, *extra):
        capsys.readouterr()  # the runs' own progress, before the gate's output
        return invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--bootstrap", "500", *extra)

    return run


def _cells(result) -> dict:
    return {c["length"]: c for c in json.loads(result.stdout)["cells"]}


def test_a_rerun_passes_with_no_change(gate, baseline, tiny_llama_dir, corpus_file, tmp_path):
    again = _run(tmp_path / "again.json", tiny_llama_dir, corpus_file, evaluator_model=str(tiny_llama_dir))
    result = gate(baseline, again, "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    cells = _cells(result)
    assert cells[96]["verdict"] == "pass" and cells[96]["effect"] == pytest.approx(0.0, abs=1e-12)
    assert cells[96]["units"] == 6  # every document holds a key token at L = 96
    assert cells[16]["verdict"] == "skipped" and cells[16]["baseline"]["value"] is None  # no key token


def test_a_worse_model_on_the_baselines_key_tokens_fails(gate, baseline, uniform_dir, corpus_file, tmp_path):
    """The paper's protocol: the candidate scored on the key tokens stored in the baseline's file."""
    worse = _run(tmp_path / "worse.json", uniform_dir, corpus_file, key_tokens=str(baseline))
    result = gate(baseline, worse, "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    cell = _cells(result)[96]
    assert cell["verdict"] == "regression" and cell["p_adjusted"] <= 0.05
    base_value, worse_value = cell["baseline"]["value"], cell["candidate"]["value"]
    vocabulary = json.loads((uniform_dir / "config.json").read_text())["vocab_size"]
    assert worse_value == pytest.approx(vocabulary, rel=1e-4)  # a uniform prediction's perplexity
    assert cell["effect"] == pytest.approx(worse_value / base_value - 1, rel=1e-9)
    assert cell["effect"] > math.expm1(math.log(vocabulary) - RULE["bound"])  # every key loss < bound
    table = gate(baseline, worse)
    assert table.returncode == 1 and "REGRESSION" in table.stdout and "longppl 96" in table.stdout


def test_a_candidate_judged_on_its_own_key_tokens_is_refused(gate, baseline, corpus_file, tmp_path):
    other = make_tiny_llama(tmp_path / "other", add_bos=False, seed=5)
    own = _run(tmp_path / "own.json", other, corpus_file)  # no --key-tokens: it judges its own
    result = gate(baseline, own)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert (
        "key-token sets differ at longppl" in result.stderr and "--key-tokens BASELINE.json" in result.stderr
    )
