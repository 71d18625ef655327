"""``coca-eval import helmet`` on real HELMET outputs (``data/helmet``, written by
``scripts/helmet_outputs.sh``: HELMET's eval.py at the commit in ``data/helmet/COMMIT`` on
SmolLM2-135M-Instruct, json_kv and kilt_nq at 8k, 3 samples each, on ``tests/helmet/helmet_files.py``'s
files): every per-sample metric and every average is HELMET's own; a file that disagrees is refused;
the samples keep HELMET's order, as ``--protocol helmet`` draws them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.imported.helmet_outputs import import_helmet_outputs
from coca_eval.results import load_run

DATA = Path(__file__).parent / "data" / "helmet"
FILES = sorted(DATA.glob("*.json"))


def test_the_outputs_come_from_the_commit_the_docs_name():
    assert (DATA / "COMMIT").read_text().strip() == "4526dfbdc512bd9ff721da336bff4e3e75ecfd27"
    assert [json.loads(f.read_text())["args"]["datasets"] for f in FILES] == ["json_kv", "kilt_nq"]


def test_every_metric_and_average_is_helmets_own():
    run = import_helmet_outputs(FILES)
    assert [(c.dataset, c.length, c.detail["protocol"]) for c in run.cells] == [
        ("json_kv", 8192, "helmet"),
        ("kilt_nq", 8192, "helmet"),
    ]
    for cell, path in zip(run.cells, FILES, strict=True):
        theirs = json.loads(path.read_text())
        metric = "substring_exact_match"
        assert cell.value == pytest.approx(theirs["averaged_metrics"][metric], abs=1e-9)
        assert [r["score"] for r in cell.detail["samples"]] == [float(d[metric]) for d in theirs["data"]]
        assert [r["output"] for r in cell.detail["samples"]] == [d["output"] for d in theirs["data"]]
        assert cell.detail["answer_budget"] == int(theirs["args"]["generation_max_length"])


def test_the_cli_writes_a_run_that_loads_and_reports(capsys, tmp_path):
    """docs/interop.md's HELMET example: import the files, then report the run."""
    out = tmp_path / "helmet.json"
    result = invoke(capsys, "import", "helmet", *FILES, "--output", out)
    assert result.returncode == 0, result.stderr
    run = load_run(out)  # the load re-scores every sample with HELMET's scoring
    assert {c.dataset for c in run.cells} == {"json_kv", "kilt_nq"}
    report = invoke(capsys, "report", out, "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    assert "Imported from helmet" in (tmp_path / "report" / "report.md").read_text()


def _forged(tmp_path, change) -> Path:
    path = tmp_path / FILES[1].name
    data = json.loads(FILES[1].read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["data"][0].update(substring_exact_match=1.0 - d["data"][0]["substring_exact_match"]),
         r"data\[0\] has substring_exact_match .* but its output earns"),
        (lambda d: d["averaged_metrics"].update(substring_exact_match=55.5),
         r"averaged_metrics.substring_exact_match is 55.5 but its 3 samples average"),
        (lambda d: d["args"].update(datasets="kilt_nq,kilt_nq"), r"args.datasets is .* not one value"),
        (lambda d: d["args"].update(datasets="infbench_qa_eng"), r"HELMET dataset 'infbench_qa_eng' cannot"),
        (lambda d: d.pop("averaged_metrics"), r"averaged_metrics: Field required"),
    ],
    ids=["score-not-its-output", "average", "two-datasets", "other-category", "missing-field"],
)  # fmt: skip
def test_a_file_that_disagrees_is_refused_in_one_line(tmp_path, change, message):
    with pytest.raises(CocaEvalError, match=message):
        import_helmet_outputs([_forged(tmp_path, change)])


def test_a_rerank_file_keeps_its_references_best_first_as_helmets_own_run_lists_them(tmp_path):
    """A re-ranking output's ``qrel`` (the passages in file order) becomes the references HELMET's own
    run recorded for that query (``tests/helmet/data/helmet_prompts.json``): best label first, equal
    labels in the file's order, so the gate pairs the import with a ``--protocol helmet`` run."""
    from tests.helmet.helmet_files import write_rerank_dir

    reference = json.loads(
        (Path(__file__).parents[1] / "helmet" / "data" / "helmet_prompts.json").read_text()
    )
    (case,) = [c for c in reference["rerank"] if c["length"] == 8192 and not c["chat"] and c["samples"] == 4]
    (theirs,) = [p for p in case["prompts"] if p["qid"] == "1000"]
    data = write_rerank_dir(tmp_path / "data")
    rows = (data / "msmarco/test_reranking_data_k50_dep3.jsonl").read_text().splitlines()
    (row,) = [r for r in map(json.loads, rows) if r["qid"] == "1000"]
    ideal = " > ".join(ref.split(":")[0] for ref in theirs["references"])
    output = json.loads(FILES[1].read_text())
    output["args"].update(datasets="msmarco_rerank_psg")
    output["data"] = [
        {"qid": "1000", "qrel": [[p["id"], p["label"]] for p in row["ctxs"]], "output": ideal, "NDCG@10": 1.0}
    ]
    output["averaged_metrics"] = {"NDCG@10": 100.0}
    path = tmp_path / "msmarco_rerank_psg.json"
    path.write_text(json.dumps(output))
    (cell,) = import_helmet_outputs([path]).cells
    assert cell.dataset == "msmarco_rerank_psg" and cell.value == 100.0
    assert cell.detail["samples"][0]["answers"] == theirs["references"]


def test_a_balanced_icl_file_imports_as_its_task(tmp_path):
    """HELMET names its ICL datasets with their shots and ``_balance`` (``load_icl(f"{task}_{shots}shot
    _balance")``, as scripts/helmet_prompt_ids.py calls it): such a file is its task's cell."""
    output = json.loads(FILES[1].read_text())
    output["args"].update(datasets="icl_trec_coarse_6600shot_balance", generation_max_length=20)
    output["data"] = [
        {"answer": 3, "output": "label: 3", "exact_match": 1.0},
        {"answer": 1, "output": "label: 4", "exact_match": 0.0},
    ]
    output["averaged_metrics"] = {"exact_match": 50.0}
    path = tmp_path / "icl_trec_coarse_6600shot_balance.json"
    path.write_text(json.dumps(output))
    (cell,) = import_helmet_outputs([path]).cells
    assert (cell.dataset, cell.value, cell.n) == ("icl_trec_coarse", 50.0, 2)


def test_a_bad_file_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = invoke(capsys, "import", "helmet", bad, "--output", tmp_path / "x.json")
    assert result.returncode == 2 and "cannot read" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.json").exists()


def test_the_gate_pairs_two_imports_of_the_same_samples(capsys, tmp_path):
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "helmet", *FILES, "--output", base).returncode == 0
    same = invoke(capsys, "gate", "--baseline", base, "--candidate", base)
    assert same.returncode == 0, same.stdout + same.stderr
    shutil.copy(base, tmp_path / "copy.json")
    data = json.loads((tmp_path / "copy.json").read_text())
    cell = data["cells"][1]
    cell["detail"]["samples"][0].update(answers=["a question nobody asked"], output="", score=0.0)
    cell["value"] = 100 * sum(r["score"] for r in cell["detail"]["samples"]) / cell["n"]
    (tmp_path / "copy.json").write_text(json.dumps(data))
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", tmp_path / "copy.json")
    assert refused.returncode == 2 and "HELMET samples (their references) differ" in refused.stderr, (
        refused.stdout + refused.stderr
    )


@pytest.mark.usefixtures("scripted")
def test_our_protocol_helmet_run_on_the_same_files_holds_the_same_samples(tmp_path):
    """``coca-eval helmet --protocol helmet`` on the files HELMET read, with its seed and sample count,
    draws the very samples HELMET's output holds, index by index: the gate can pair the two."""
    from coca_eval.api import Runtime, evaluate
    from coca_eval.generation.report import unit_ids
    from coca_eval.helmet.params import make_helmet_params
    from coca_eval.methods import make_method
    from tests.helmet.helmet_files import write_data_dir, write_recall_dir

    data = tmp_path / "data"
    write_data_dir(data, 3)
    write_recall_dir(data)
    values = {"tasks": "json_kv,kilt_nq", "lengths": "8k", "samples": 3, "seed": 42, "data": str(data)}
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    ours = evaluate(
        "helmet",
        [method],
        make_helmet_params({**values, "protocol": "helmet"}),
        tmp_path / "o.json",
        Runtime(),
    )
    theirs = import_helmet_outputs(FILES)
    for mine, imported in zip(ours.cells, theirs.cells, strict=True):
        assert (mine.dataset, mine.length) == (imported.dataset, imported.length)
        assert unit_ids(mine) == unit_ids(imported)
