"""The real OpenCompass on tiny random models (LLaMA-style and CoCA) and a tiny upstream-layout data root.

Each OpenCompass task runs in its own process, so this also checks that our model class is importable
there and that CoCA registers itself on import. Slow (a few minutes on two CPU cores).
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from oc_data import SIZES, write_data_root
from tiny_models import make_tiny_llama

from coca_eval import provenance
from coca_eval.results import load_run

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.opencompass,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("opencompass") is None,
        reason="OpenCompass is not installed (bash scripts/install_opencompass.sh)",
    ),
]


def run_cli(*args):
    env = {**os.environ, "COLUMNS": "200"}
    command = [sys.executable, str(ROOT / "cli.py"), "opencompass", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from coca_eval.models.convert import convert_from_llama

    base = tmp_path_factory.mktemp("oc-models")
    llama = make_tiny_llama(base / "tiny-llama", add_bos=True)
    coca = convert_from_llama(llama, base / "tiny-coca", "slack")
    return llama, Path(coca)


@pytest.fixture(scope="module")
def finished(models, tmp_path_factory):
    base = tmp_path_factory.mktemp("oc-run")
    root, out = write_data_root(base / "root"), base / "run.json"
    args = ["--model", models[0], "--model", models[1], "--datasets", "COPA,RTE,BoolQ,MMLU:anatomy"]
    args += ["--data-root", root, "--work-dir", base / "work", "--batch-size", 4, "--output", out]
    return run_cli(*args), out, args


def test_both_models_get_a_sane_cell_per_dataset(finished, models):
    result, out, _ = finished
    assert result.returncode == 0, result.stderr[-3000:]
    run = load_run(out)
    cells = {(c.method, c.dataset): c for c in run.cells}
    labels = [m["label"] for m in run.config["methods"]]
    assert labels == ["tiny-llama", "tiny-coca"]
    assert (run.git, run.git_dirty) == (provenance.git_revision(), provenance.git_dirty())
    assert sorted(cells) == sorted((m, d) for m in labels for d in ("COPA", "RTE", "BoolQ", "MMLU"))
    for (_, dataset), cell in cells.items():
        assert (cell.task, cell.metric, cell.status) == ("opencompass", "accuracy", "ok")
        assert 0.0 <= cell.value <= 100.0
        assert cell.n == SIZES[dataset]
    assert cells["tiny-coca", "MMLU"].detail["subjects"]["lukaemon_mmlu_anatomy"]["n"] == SIZES["MMLU"]


def test_the_coca_model_really_ran_as_coca(finished):
    """Its choice scores differ from the LLaMA it was converted from (same weights, other attention)."""
    _, out, _ = finished
    output = Path(load_run(out).cells[0].detail["output"])
    scores = {
        model: json.loads((output / "predictions" / model / "COPA.json").read_text())["0"]["label: 0"]["PPL"]
        for model in ("tiny-llama", "tiny-coca")
    }
    assert all(4.0 < s < 7.0 for s in scores.values())  # ~ln(vocab) for a random model
    assert scores["tiny-llama"] != scores["tiny-coca"]


def test_table5_is_printed_with_categories_and_total(finished):
    result, _, _ = finished
    for needle in ("Reasoning", "Knowledge", "Examination", "COPA", "MMLU", "Total", "tiny-coca"):
        assert needle in result.stdout


def test_rerunning_the_command_reuses_finished_tasks(finished):
    result, out, args = finished
    assert result.returncode == 0
    first = load_run(out)
    stamp = Path(first.cells[0].detail["output"]).name
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    second = load_run(out)
    assert [(c.method, c.dataset, c.value, c.n) for c in second.cells] == [
        (c.method, c.dataset, c.value, c.n) for c in first.cells
    ]
    work = Path(first.config["work_dir"])
    assert f"Reusing experiements from {stamp}" in (work / "opencompass.log").read_text()  # (sic)
    assert [p.name for p in (work / "outputs").iterdir() if p.is_dir()] == [stamp]


def test_a_failed_task_is_an_error_cell_and_a_one_line_error(models, tmp_path):
    """OpenCompass exits 0 when a task dies; the missing result file gives it away."""
    broken = tmp_path / "broken"
    broken.mkdir()
    for item in models[0].iterdir():
        (broken / item.name).write_bytes(item.read_bytes())
    (broken / "model.safetensors").write_bytes(b"not safetensors")
    out = tmp_path / "run.json"
    root = write_data_root(tmp_path / "root")
    result = run_cli("--model", broken, "--datasets", "COPA", "--data-root", root, "--output", out)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("coca-eval: error:")]
    assert "OpenCompass task COPA for 'broken' failed" in line and "logs/infer/broken/COPA.out" in line
    (cell,) = load_run(out).cells
    assert (cell.status, cell.value) == ("error", None)
