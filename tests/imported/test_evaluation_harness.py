"""``coca-eval import lm-eval`` on a real lm-evaluation-harness 0.4.13 output folder
(``data/lm_eval_ruler``, written by ``scripts/lm_eval_ruler_outputs.sh``: SmolLM2-135M-Instruct,
``niah_single_1`` and ``ruler_vt`` at 1k and 2k, ``--log_samples``): every per-sample score and every
aggregate is lm-eval's own; a file that disagrees with itself or with RULER's scoring is refused; the
gate pairs two imports of the same samples and refuses samples that differ."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.imported.evaluation_harness import import_harness_dir
from coca_eval.results import load_run
from tests.imported.lm_eval_folders import LM_EVAL_RULER, copy_lm_eval_ruler, rewrite_samples

DATA = LM_EVAL_RULER


def _their_files(folder: Path) -> tuple[dict, dict[str, list[dict]]]:
    results = json.loads(next(folder.glob("results_*.json")).read_text())
    samples = {
        task: [json.loads(line) for line in next(folder.glob(f"samples_{task}_*.jsonl")).open()]
        for task in results["results"]
    }
    return results, samples


def test_every_sample_score_and_aggregate_is_lm_evals_own():
    results, samples = _their_files(DATA)
    run = import_harness_dir(DATA)
    assert run.config["source"]["version"] == "0.4.13" and run.config["task"] == "ruler"
    cells = {(c.dataset, c.length): c for c in run.cells}
    assert set(cells) == {(t, n) for t in ("niah_single_1", "vt") for n in (1024, 2048)}
    for task, name in (("niah_single_1", "niah_single_1"), ("ruler_vt", "vt")):
        for length in (1024, 2048):
            theirs = {s["doc"]["index"]: s for s in samples[task] if s["doc"]["max_length"] == length}
            cell = cells[name, length]
            assert [r["index"] for r in cell.detail["samples"]] == sorted(theirs)
            for record in cell.detail["samples"]:
                sample = theirs[record["index"]]
                assert record["score"] == sample[str(length)]
                assert record["output"] == sample["filtered_resps"][0]
                assert record["answers"] == sample["doc"]["outputs"]
            assert cell.value / 100 == pytest.approx(results["results"][task][f"{length},none"], abs=1e-12)
            assert cell.n == len(theirs) and cell.detail["answer_budget"] in (128, 30)


def test_the_cli_writes_a_run_that_loads_and_reports(capsys, tmp_path):
    """docs/interop.md's example: import the folder, then report the run."""
    out = tmp_path / "imported.json"
    result = invoke(capsys, "import", "lm-eval", DATA, "--output", out, "--method", "smollm2 (lm-eval)")
    assert result.returncode == 0, result.stderr
    assert "niah_single_1" in result.stdout and "100.0" in result.stdout
    run = load_run(out)  # the load re-scores every sample: an imported run is held to RULER's scoring
    assert {c.method for c in run.cells} == {"smollm2 (lm-eval)"}
    report = invoke(capsys, "report", out, "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    assert "Imported from lm-eval 0.4.13" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: {**s, str(s["doc"]["max_length"]): 1.0 - s[str(s["doc"]["max_length"])]},
         r"is scored .* by lm-eval but its output earns"),
        (lambda s: {k: v for k, v in s.items() if k != "doc_hash"}, r"line 1: doc_hash: Field required"),
    ],
    ids=["score-not-its-output", "missing-field"],
)  # fmt: skip
def test_a_file_that_disagrees_is_refused_in_one_line(tmp_path, change, message):
    folder = copy_lm_eval_ruler(tmp_path)
    rewrite_samples(folder, "ruler_vt", change)
    with pytest.raises(CocaEvalError, match=message):
        import_harness_dir(folder)


def test_an_aggregate_that_is_not_its_samples_mean_is_refused(tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)
    path = next(folder.glob("results_*.json"))
    results = json.loads(path.read_text())
    results["results"]["ruler_vt"]["2048,none"] = 0.9
    path.write_text(json.dumps(results))
    with pytest.raises(CocaEvalError, match=r"ruler_vt at 2048 prints 0.9 but its 2 samples average 0.2"):
        import_harness_dir(folder)


def test_missing_samples_or_results_are_one_line_exit_2(capsys, tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)
    next(folder.glob("samples_ruler_vt_*.jsonl")).unlink()
    result = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "x.json")
    assert result.returncode == 2 and "run lm-eval with --log_samples" in result.stderr, result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke(capsys, "import", "lm-eval", empty, "--output", tmp_path / "x.json")
    assert result.returncode == 2 and "holds no lm-eval results_*.json" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "x.json").exists()


def test_a_task_outside_the_ruler_port_is_imported_apart_and_named(tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)
    path = next(folder.glob("results_*.json"))
    results = json.loads(path.read_text())
    results["results"]["wikitext"] = {"word_perplexity,none": 30.0}
    path.write_text(json.dumps(results))
    with pytest.raises(
        CocaEvalError, match=r"import them apart \(--tasks niah_single_1,ruler_vt; --tasks wikitext\)"
    ):
        import_harness_dir(folder)


def test_the_gate_pairs_two_imports_of_the_same_samples(capsys, tmp_path):
    """Two lm-eval runs of the same samples pair sample by sample; a candidate whose vt answers are
    emptied (planted, scores and aggregates made consistent) changes the verdict."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    same = invoke(capsys, "gate", "--baseline", base, "--candidate", base)
    assert same.returncode == 0, same.stdout + same.stderr

    folder = copy_lm_eval_ruler(tmp_path)

    def empty(sample):
        length = str(sample["doc"]["max_length"])
        return {**sample, "filtered_resps": [""], "resps": [[""]], length: 0.0}

    rewrite_samples(folder, "niah_single_1", empty)
    path = next(folder.glob("results_*.json"))
    results = json.loads(path.read_text())
    results["results"]["niah_single_1"].update({"1024,none": 0.0, "2048,none": 0.0})
    path.write_text(json.dumps(results))
    cand = tmp_path / "cand.json"
    assert invoke(capsys, "import", "lm-eval", folder, "--output", cand).returncode == 0
    verdicts = json.loads(invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--json").stdout)
    niah = [c for c in verdicts["cells"] if c["dataset"] == "niah_single_1"]
    # beyond tolerance, not significant: with three samples no drop is ruled out either (inconclusive)
    assert len(niah) == 2 and all(c["verdict"] == "inconclusive" for c in niah), niah
    # three samples per cell cannot make a drop significant at 0.05; at 0.6 the same pairs are a regression
    worse = invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--alpha", "0.6")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    same = invoke(capsys, "gate", "--baseline", base, "--candidate", base, "--alpha", "0.6")
    assert same.returncode == 0, same.stdout + same.stderr


def _other_needles(base: Path, out: Path, tasks: set[str]) -> Path:
    """``base`` with every sample of ``tasks`` holding another needle, found: other samples, consistent."""
    data = json.loads(base.read_text())
    for cell in [c for c in data["cells"] if c["dataset"] in tasks]:
        for record in cell["detail"]["samples"]:
            record["answers"] = ["1234567"]
            record["output"], record["score"], record["found"] = "1234567", 1.0, [True]
        cell["value"] = 100.0
    out.write_text(json.dumps(data))
    return out


def test_the_gate_refuses_samples_that_differ(capsys, tmp_path):
    """A run whose niah_single_1 samples hold other needles is not the same samples: exit 2, saying so."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    other = _other_needles(base, tmp_path / "other.json", {"niah_single_1", "vt"})
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", other)
    assert refused.returncode == 2 and "RULER samples (their references) differ" in refused.stderr, (
        refused.stdout + refused.stderr
    )
    assert "3 of 3 hold other references (sample 0: [" in refused.stderr  # which, and an example
    assert "'1234567']" in refused.stderr and "not the same samples" in refused.stderr


def test_report_side_by_side_shows_samples_that_differ_unpaired_and_says_why(capsys, tmp_path):
    """What the gate refuses, ``report --side-by-side`` still shows: the niah_single_1 cells whose
    needles differ are marked unpaired with the gate's reason; the vt cells, the same samples, pair."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    other = _other_needles(base, tmp_path / "other.json", {"niah_single_1"})
    shown = invoke(capsys, "report", "--side-by-side", base, other, "--out", tmp_path / "side")
    assert shown.returncode == 0, shown.stderr
    rows = pd.read_csv(tmp_path / "side" / "side_by_side.csv")
    niah, vt = rows[rows["dataset"] == "niah_single_1"], rows[rows["dataset"] == "vt"]
    assert len(niah) == len(vt) == 2
    assert niah["pairing"].str.startswith("unpaired: RULER samples (their references) differ").all()
    assert (vt["pairing"] == "paired").all() and (vt["delta"] == 0).all()
    assert (niah["candidate"].astype(float) == 100.0).all()
    assert "2 of 4 cells pair sample by sample" in shown.stderr
    assert (tmp_path / "side" / "side_by_side.md").read_text().count("unpaired") == 2


def test_report_side_by_side_takes_two_runs(capsys, tmp_path):
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "lm-eval", DATA, "--output", base).returncode == 0
    refused = invoke(capsys, "report", "--side-by-side", base, "--out", tmp_path / "side")
    assert refused.returncode == 2 and "two results files" in refused.stderr
    assert not (tmp_path / "side").exists()


def test_a_file_from_an_unknown_lm_eval_version_is_one_line_naming_the_field(capsys, tmp_path):
    folder = copy_lm_eval_ruler(tmp_path)
    path = next(folder.glob("results_*.json"))
    results = json.loads(path.read_text())
    results["lm_eval_version"] = "0.3.0"
    path.write_text(json.dumps(results))
    refused = invoke(capsys, "import", "lm-eval", folder, "--output", tmp_path / "x.json")
    assert refused.returncode == 2 and "lm_eval_version" in refused.stderr and "0.3.0" in refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and not (tmp_path / "x.json").exists()
