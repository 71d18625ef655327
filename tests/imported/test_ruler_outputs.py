"""``coca-eval import ruler`` on RULER's own prediction folders (``data/ruler``, written by
``scripts/ruler_outputs.sh``: RULER at the commit in ``data/ruler/SOURCE``, its prepare.py, call_api.py
with the hf server and evaluate.py, SmolLM2-135M-Instruct, niah_single_1 and vt at 1k and 2k): every
answer is scored with this project's RULER scoring and each task's mean equals the score RULER's own
scoring wrote; a folder that disagrees with its summary is refused; the gate pairs two imports of the
same predictions, sees a planted change, and refuses another harness's samples (docs/interop.md)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.imported.ruler_predictions import import_ruler_predictions

DATA = Path(__file__).parent / "data" / "ruler"
FOLDERS = [DATA / "1024" / "pred", DATA / "2048" / "pred"]


def _summary(folder: Path) -> dict[str, float]:
    (path,) = folder.glob("summary*.csv")
    rows = {row[0]: row[1:] for row in csv.reader(path.read_text().splitlines())}
    return dict(zip(rows["Tasks"], map(float, rows["Score"]), strict=True))


def _predictions(folder: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text().splitlines() if line.strip()]


def _copy(tmp_path: Path) -> list[Path]:
    shutil.copytree(DATA, tmp_path / "ruler")
    return [tmp_path / "ruler" / "1024" / "pred", tmp_path / "ruler" / "2048" / "pred"]


def test_every_answer_and_task_score_is_rulers():
    run = import_ruler_predictions(FOLDERS, "SmolLM2")
    assert {(c.dataset, c.length) for c in run.cells} == {
        (t, n) for t in ("niah_single_1", "vt") for n in (1024, 2048)
    }
    for cell in run.cells:
        folder = DATA / str(cell.length) / "pred"
        assert round(cell.value, 2) == _summary(folder)[cell.dataset]  # RULER's own scoring
        theirs = sorted(_predictions(folder, cell.dataset), key=lambda x: x["index"])
        records = cell.detail["samples"]
        assert [r["output"] for r in records] == [x["pred"] for x in theirs]
        assert [r["answers"] for r in records] == [x["outputs"] for x in theirs]
        assert [r["index"] for r in records] == [x["index"] for x in theirs] and cell.n == 3


def _change_first_prediction(folders: list[Path], pred: str) -> None:
    path = folders[0] / "niah_single_1.jsonl"
    lines = _predictions(folders[0], "niah_single_1")
    lines[0]["pred"] = pred
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_a_summary_that_disagrees_with_its_predictions_is_one_line(tmp_path):
    folders = _copy(tmp_path)
    first = _predictions(folders[0], "niah_single_1")[0]
    was = import_ruler_predictions(folders, "m").cells[0].detail["samples"][0]["score"]
    _change_first_prediction(folders, "" if was else " ".join(first["outputs"]))
    with pytest.raises(CocaEvalError, match="RULER's summary scores niah_single_1"):
        import_ruler_predictions(folders, "m")


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda f: next(f.glob("summary*.csv")).unlink(), "no summary"),
        (lambda f: (f / "qa_9.jsonl").write_text('{"index": 0}\n'), "not one of RULER's"),
        (lambda f: (f / "vt.jsonl").write_text('{"index": 0, "pred": "x"}\n'), "no input, outputs"),
    ],
    ids=["no-summary", "unknown-task", "missing-field"],
)
def test_a_damaged_folder_is_one_line(tmp_path, damage, says):
    folders = _copy(tmp_path)
    damage(folders[0])
    with pytest.raises(CocaEvalError, match=says):
        import_ruler_predictions(folders, "m")


def test_a_folder_without_its_length_is_one_line(capsys, tmp_path):
    shutil.copytree(FOLDERS[0], tmp_path / "pred")
    done = invoke(capsys, "import", "ruler", tmp_path / "pred", "--output", tmp_path / "r.json")
    assert done.returncode == 2 and "no folder named by its length" in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_the_gate_pairs_two_imports_and_refuses_another_harnesss_samples(capsys, tmp_path):
    base = tmp_path / "base.json"
    done = invoke(capsys, "import", "ruler", *FOLDERS, "--output", base)
    assert done.returncode == 0, done.stderr
    assert invoke(capsys, "gate", "--baseline", base, "--candidate", base).returncode == 0
    lmeval = tmp_path / "lmeval.json"
    assert (
        invoke(capsys, "import", "lm-eval", DATA.parent / "lm_eval_ruler", "--output", lmeval).returncode == 0
    )
    refused = invoke(capsys, "gate", "--baseline", base, "--candidate", lmeval)
    assert refused.returncode == 2 and "incomparable" in refused.stderr, refused.stderr
    shown = invoke(capsys, "report", "--side-by-side", base, lmeval, "--out", tmp_path / "side")
    assert shown.returncode == 0 and "0 of" in shown.stderr, shown.stderr


def test_a_planted_change_in_the_predictions_changes_the_verdict(capsys, tmp_path):
    """Every answer of the candidate emptied (RULER's summary rewritten to match): the needles the
    baseline retrieved (all three of niah_single_1's at 1k) are lost; three samples cannot make that
    significant at 0.05 (McNemar's floor is 1/8), and at alpha 0.6 the gate calls it a regression."""
    base = tmp_path / "base.json"
    assert invoke(capsys, "import", "ruler", *FOLDERS, "--output", base).returncode == 0
    retrieved = {(c["dataset"], c["length"]): c["value"] for c in json.loads(base.read_text())["cells"]}
    assert retrieved["niah_single_1", 1024] == 100.0
    folders = _copy(tmp_path)
    for folder in folders:
        for task in ("niah_single_1", "vt"):
            lines = [{**x, "pred": ""} for x in _predictions(folder, task)]
            (folder / f"{task}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        (summary,) = folder.glob("summary*.csv")
        rows = list(csv.reader(summary.read_text().splitlines()))
        rows = [row if row[0] != "Score" else ["Score"] + ["0.0"] * (len(row) - 1) for row in rows]
        summary.write_text("\n".join(",".join(row) for row in rows) + "\n")
    cand = tmp_path / "cand.json"
    assert invoke(capsys, "import", "ruler", *folders, "--output", cand).returncode == 0
    assert invoke(capsys, "gate", "--baseline", base, "--candidate", cand).returncode == 0
    verdict = invoke(capsys, "gate", "--baseline", base, "--candidate", cand, "--alpha", "0.6")
    assert verdict.returncode == 1, verdict.stdout + verdict.stderr
