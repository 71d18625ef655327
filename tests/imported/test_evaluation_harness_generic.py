"""``coca-eval import lm-eval`` on a real lm-evaluation-harness 0.4.13 run of a task outside RULER's
port (``data/lm_eval_generation``, written by ``scripts/lm_eval_generation_outputs.sh``: a local
generate_until task, ``capital_cities``, lm-eval's exact_match, SmolLM2-135M-Instruct, --log_samples):
it keeps lm-eval's task and metric names, every per-sample value and the aggregate are lm-eval's own
and checked; the gate pairs two imports by doc_id and prompt, sees a planted change, refuses other
prompts (docs/interop.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.imported.evaluation_harness import import_harness_dir

DATA = Path(__file__).parent / "data" / "lm_eval_generation"
TASK = "capital_cities"


def _theirs(folder: Path = DATA) -> tuple[dict, list[dict]]:
    results = json.loads(next(folder.glob("results_*.json")).read_text())
    samples = [json.loads(line) for line in next(folder.glob(f"samples_{TASK}_*.jsonl")).open()]
    return results, samples


def _rewrite(tmp_path: Path, change_sample=None, change_results=None) -> Path:
    folder = tmp_path / "lmeval"
    shutil.copytree(DATA, folder)
    results, samples = _theirs(folder)
    if change_sample is not None:
        samples = [change_sample(s) for s in samples]
        path = next(folder.glob(f"samples_{TASK}_*.jsonl"))
        path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    if change_results is not None:
        change_results(results, samples)
        next(folder.glob("results_*.json")).write_text(json.dumps(results))
    return folder


def _mean_printed(results: dict, samples: list[dict]) -> None:
    results["results"][TASK]["exact_match,none"] = sum(s["exact_match"] for s in samples) / len(samples)


def test_the_task_keeps_lm_evals_names_and_every_value_is_its_own():
    results, samples = _theirs()
    run = import_harness_dir(DATA)
    (cell,) = run.cells
    assert (run.config["task"], cell.task, cell.dataset, cell.metric) == (
        "lm-eval",
        "lm-eval",
        TASK,
        "exact_match",
    )
    assert cell.value == results["results"][TASK]["exact_match,none"] and cell.n == 12
    for sample, record in zip(samples, cell.detail["samples"], strict=True):
        assert record["value"] == sample["exact_match"] and record["index"] == sample["doc_id"]
        assert record["output"] == sample["filtered_resps"][0] and record["target"] == sample["target"]
        assert record["prompt_sha256"] == sample["prompt_hash"]
    assert run.config["params"]["generation_kwargs"][TASK]["max_gen_toks"] == 8


@pytest.mark.parametrize(
    ("change_sample", "change_results", "says"),
    [
        (lambda s: {**s, "exact_match": 1.0}, None, "samples average 1.0"),
        (lambda s: {**s, "exact_match": "yes"}, None, "no numeric exact_match"),
        (None, lambda r, s: r["configs"][TASK]["metric_list"][0].update(aggregation="bleu"), "by bleu"),
    ],
    ids=["aggregate", "not-a-number", "not-a-mean"],
)  # fmt: skip
def test_a_file_that_disagrees_with_itself_is_one_line(tmp_path, change_sample, change_results, says):
    with pytest.raises(CocaEvalError, match=says):
        import_harness_dir(_rewrite(tmp_path, change_sample, change_results))


def test_a_task_with_two_filters_gives_each_filter_its_own_samples(tmp_path):
    """lm-eval writes a document once per filter (``filter``: its name; ``filtered_resps``: that filter's
    answer) and prints ``metric,filter`` for each, as gsm8k's strict-match and flexible-extract: each
    filter's cell holds its own samples, and its value is its own mean (a loose filter scoring every
    document here, the strict one the run's own values)."""

    def both(folder: Path) -> None:
        results, samples = _theirs(folder)
        strict = [{**s, "filter": "strict-match"} for s in samples]
        loose = [
            {**s, "filter": "loose", "filtered_resps": [s["target"]], "exact_match": 1.0} for s in samples
        ]
        path = next(folder.glob(f"samples_{TASK}_*.jsonl"))
        path.write_text("".join(json.dumps(s) + "\n" for s in [*strict, *loose]))
        printed = results["results"][TASK]
        printed["exact_match,strict-match"] = printed.pop("exact_match,none")
        printed["exact_match_stderr,strict-match"] = printed.pop("exact_match_stderr,none")
        printed["exact_match,loose"], printed["exact_match_stderr,loose"] = 1.0, 0.0
        next(folder.glob("results_*.json")).write_text(json.dumps(results))

    results, samples = _theirs()
    folder = _rewrite(tmp_path)
    both(folder)
    cells = {c.metric: c for c in import_harness_dir(folder).cells}
    assert sorted(cells) == ["exact_match,loose", "exact_match,strict-match"]
    strict, loose = cells["exact_match,strict-match"], cells["exact_match,loose"]
    assert strict.value == results["results"][TASK]["exact_match,none"] < 1.0 and loose.value == 1.0
    assert strict.n == loose.n == len(samples) == 12
    assert [r["value"] for r in strict.detail["samples"]] == [s["exact_match"] for s in samples]
    assert [r["output"] for r in strict.detail["samples"]] == [s["filtered_resps"][0] for s in samples]
    assert [r["output"] for r in loose.detail["samples"]] == [s["target"] for s in samples]
    assert strict.detail["imported_from"]["filter"] == "strict-match"


def test_the_gate_pairs_two_imports_and_sees_a_planted_drop(capsys, tmp_path):
    """docs/interop.md: import the folder, gate it against itself (it passes). A candidate that lost
    the five capitals it named at even doc_ids (answers and scores emptied, the aggregate made
    consistent) fails: five losses and no gain, McNemar's p is 1/32."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    assert invoke(capsys, "gate", "--baseline", base, "--candidate", base).returncode == 0

    def lost(sample):
        if sample["doc_id"] % 2 == 0 and sample["exact_match"] == 1.0:
            return {**sample, "exact_match": 0.0, "filtered_resps": [""], "resps": [[""]]}
        return sample

    cand = tmp_path / "cand.json"
    folder = _rewrite(tmp_path, lost, _mean_printed)
    assert invoke(capsys, "import", "lm-eval", folder, "--output", cand).returncode == 0
    verdict = invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--json")
    assert verdict.returncode == 1, verdict.stdout + verdict.stderr
    (checked,) = json.loads(verdict.stdout)["cells"]
    assert checked["dataset"] == TASK and checked["p_value"] == pytest.approx(1 / 32)
    assert checked["effect"] == pytest.approx(100 * 5 / 12) and checked["units"] == 12  # points


def test_the_gate_refuses_other_prompts(capsys, tmp_path):
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    data = json.loads(base.read_text())
    data["cells"][0]["detail"]["samples"][3]["prompt_sha256"] = "0" * 64
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", other)
    assert refused.returncode == 2 and "samples (lm-eval's doc_id" in refused.stderr, refused.stderr
