"""``coca-eval import lm-eval`` on a real lm-evaluation-harness 0.4.13 perplexity run
(``data/lm_eval_ppl``, written by ``scripts/lm_eval_ppl_outputs.sh``: lm-eval's wikitext task as
written, on four local book openings, SmolLM2-135M-Instruct, 512-token windows, ``--log_samples``):
every document's log-likelihood and counts and every aggregate are lm-eval's own and checked; the gate
pairs two imports of the same documents, sees a planted change, and refuses other documents."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.imported.evaluation_harness import import_harness_dir

DATA = Path(__file__).parent / "data" / "lm_eval_ppl"
TASK = "books_ppl"
METRICS = ("word_perplexity", "byte_perplexity", "bits_per_byte")


def _theirs(folder: Path = DATA) -> tuple[dict, list[dict]]:
    results = json.loads(next(folder.glob("results_*.json")).read_text())
    samples = [json.loads(line) for line in next(folder.glob(f"samples_{TASK}_*.jsonl")).open()]
    return results, samples


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "lmeval"
    shutil.copytree(DATA, folder)
    return folder


def _rewrite(folder: Path, change_sample=None, change_results=None) -> None:
    samples_path = next(folder.glob(f"samples_{TASK}_*.jsonl"))
    samples = [json.loads(line) for line in samples_path.read_text().splitlines()]
    if change_sample is not None:
        samples = [change_sample(s) for s in samples]
        samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    results_path = next(folder.glob("results_*.json"))
    results = json.loads(results_path.read_text())
    if change_results is not None:
        change_results(results["results"][TASK], samples)
        results_path.write_text(json.dumps(results))


def _consistent(printed: dict, samples: list[dict]) -> None:
    """Aggregates made to follow the (changed) documents, as lm-eval would print them."""
    ll = sum(float(s["filtered_resps"][0]) for s in samples)
    words, size = sum(s["word_perplexity"][1] for s in samples), sum(s["byte_perplexity"][1] for s in samples)
    printed["word_perplexity,none"] = math.exp(-ll / words)
    printed["byte_perplexity,none"] = math.exp(-ll / size)
    printed["bits_per_byte,none"] = -ll / size / math.log(2)


def test_every_document_and_aggregate_is_lm_evals():
    results, samples = _theirs()
    run = import_harness_dir(DATA)
    assert run.config["task"] == "lm-eval-perplexity" and run.config["params"] == {
        "tasks": [TASK],
        "max_length": "512",
    }
    assert [c.metric for c in run.cells] == list(METRICS)
    for cell in run.cells:
        assert cell.dataset == TASK and cell.value == results["results"][TASK][f"{cell.metric},none"]
        assert cell.n == len(samples) == 4
        records = cell.detail["documents"]
        for sample, record in zip(samples, records, strict=True):
            assert record["index"] == sample["doc_id"] and record["doc_hash"] == sample["doc_hash"]
            assert record["loglikelihood"] == float(sample["filtered_resps"][0]) == sample[cell.metric][0]
            assert record["words"] == sample["word_perplexity"][1]
            assert record["bytes"] == sample["byte_perplexity"][1] == sample["bits_per_byte"][1]


def _pair(sample: dict, metric: str, more_ll: float, more_count: int) -> dict:
    loglikelihood, count = sample[metric]
    return {**sample, metric: [loglikelihood + more_ll, count + more_count]}


@pytest.mark.parametrize(
    ("change_sample", "change_results", "says"),
    [
        (lambda s: _pair(s, "word_perplexity", 0.0, 1), None, "words"),
        (lambda s: _pair(s, "byte_perplexity", -1.0, 0), None, "log-likelihood"),
        (None, lambda printed, samples: printed.update({"word_perplexity,none": 250.0}), "documents give"),
        (lambda s: {k: v for k, v in s.items() if k != "target"}, None, "target"),
    ],
    ids=["word-count", "pair-loglikelihood", "aggregate", "no-target"],
)  # fmt: skip
def test_a_file_that_disagrees_with_itself_is_one_line(tmp_path, change_sample, change_results, says):
    folder = _copy(tmp_path)
    _rewrite(folder, change_sample, change_results)
    with pytest.raises(CocaEvalError, match=says):
        import_harness_dir(folder)


def test_the_gate_pairs_two_imports_and_sees_a_planted_rise(capsys, tmp_path):
    """docs/interop.md's example: import the folder, gate it against itself (it passes). A candidate
    with every document 5 % less likely (log-likelihoods scaled, aggregates made consistent): four
    documents cannot make it significant at 0.05 (the exact test's floor is 1/16); at 0.6 it is a
    regression."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    folder = _copy(tmp_path)

    def worse(sample):
        ll = float(sample["filtered_resps"][0]) * 1.05
        pairs = {m: [ll, sample[m][1]] for m in METRICS}
        return {**sample, **pairs, "resps": [[str(ll)]], "filtered_resps": [str(ll)]}

    _rewrite(folder, worse, _consistent)
    cand = tmp_path / "cand.json"
    assert invoke(capsys, "import", "lm-eval", folder, "--output", cand).returncode == 0
    verdict = json.loads(invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--json").stdout)
    # a 5 % rise on three documents: not significant, and too few documents to rule it out
    assert [c["verdict"] for c in verdict["cells"]] == ["inconclusive"] * 3, verdict
    assert all("too few units" in c["reason"] for c in verdict["cells"]), verdict
    assert invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--alpha", "0.6").returncode == 1
    assert invoke(capsys, "gate", "--baseline", base, "--candidate", base, "--alpha", "0.6").returncode == 0


def test_the_gate_refuses_other_documents_and_another_window(capsys, tmp_path):
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    data = json.loads(base.read_text())
    for cell in data["cells"]:
        cell["detail"]["documents"][0]["doc_hash"] = "0" * 64
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", other)
    assert refused.returncode == 2 and "documents" in refused.stderr, refused.stderr
    data = json.loads(base.read_text())
    data["config"]["params"]["max_length"] = "1024"
    wider = tmp_path / "wider.json"
    wider.write_text(json.dumps(data))
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", wider)
    assert refused.returncode == 2 and "max_length" in refused.stderr, refused.stderr


def test_a_folder_with_ruler_and_perplexity_tasks_is_imported_a_family_at_a_time(capsys, tmp_path):
    """lm-eval run once on RULER and a perplexity task: one line asking for --tasks; each family then
    imports on its own."""
    folder = tmp_path / "both"
    shutil.copytree(Path(__file__).parent / "data" / "lm_eval_ruler", folder)
    results_path = next(folder.glob("results_*.json"))
    stamp = results_path.name.removeprefix("results_").removesuffix(".json")
    theirs, _ = _theirs()
    results = json.loads(results_path.read_text())
    results["results"][TASK] = theirs["results"][TASK]
    results["configs"][TASK] = theirs["configs"][TASK]
    results_path.write_text(json.dumps(results))
    shutil.copy(next(DATA.glob(f"samples_{TASK}_*.jsonl")), folder / f"samples_{TASK}_{stamp}.jsonl")
    with pytest.raises(CocaEvalError, match="import them apart"):
        import_harness_dir(folder)
    out = tmp_path / "ppl.json"
    done = invoke(capsys, "import", "lm-eval", folder, "--tasks", TASK, "--output", out)
    assert done.returncode == 0, done.stderr
    assert {c["task"] for c in json.loads(out.read_text())["cells"]} == {"lm-eval-perplexity"}
    assert import_harness_dir(folder, tasks=["niah_single_1", "ruler_vt"]).config["task"] == "ruler"
    assert (
        "holds no task" in invoke(capsys, "import", "lm-eval", folder, "--tasks", "x", "--output", out).stderr
    )
