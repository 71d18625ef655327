"""RULER's own prediction folders (``<root>/<N>/pred``: a ``<task>.jsonl`` per task from its
``pred/call_api.py``, and the ``summary*.csv`` its ``eval/evaluate.py`` wrote) as a ``ruler`` run.

Each prediction line holds RULER's ``index``, the prompt (``input``), the references (``outputs``) and
the model's answer (``pred``). Every answer is scored here with this project's RULER scoring (RULER's
post-processing, then ``string_match_all`` or ``_part``), and each task's mean must be the score RULER's
own scoring put in its summary (percent, two decimals): a folder whose summary disagrees with its
predictions is refused in one line, never imported, and so is a prediction whose references are all
empty after normalisation (found in any answer: :mod:`coca_eval.references`) or an index met twice
(the sample would count twice). The length N (RULER's
``max_seq_length``, prompt plus answer budget, as this project counts it) is the name of the folder
above ``pred``, as RULER's ``run.sh`` lays its results out.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.files import read_user_text
from coca_eval.references import check_references
from coca_eval.results import Cell, Run, unique_units

SCORE_DECIMALS = 2  # RULER's summary: round(100 * mean, 2)


def folder_length(folder: Path) -> int:
    """N from RULER's layout: the nearest folder above (or at) ``folder`` named by an integer."""
    for part in (folder, *folder.parents):
        if part.name.isdigit():
            return int(part.name)
    raise CocaEvalError(f"{folder}: no folder named by its length above it (RULER writes <N>/pred)")


def read_summary(folder: Path) -> dict[str, float]:
    """RULER's summary rows ``Tasks`` and ``Score`` (summary.csv, or summary-<task>.csv for one task)."""
    found = sorted(folder.glob("summary*.csv"))
    if not found:
        raise CocaEvalError(f"{folder} has no summary*.csv: run RULER's eval/evaluate.py on it first")
    scores: dict[str, float] = {}
    for path in found:
        rows = {row[0]: row[1:] for row in csv.reader(read_user_text(path).splitlines()) if row}
        if "Tasks" not in rows or "Score" not in rows:
            raise CocaEvalError(f"{path}: no Tasks and Score rows (not RULER's summary)")
        for task, score in zip(rows["Tasks"], rows["Score"], strict=False):
            try:
                scores[task] = float(score)
            except ValueError:
                raise CocaEvalError(f"{path}: {task}'s score {score!r} is not a number") from None
    return scores


def read_predictions(path: Path) -> list[dict]:
    """A ``<task>.jsonl``: every line must hold index, input, outputs and pred."""
    lines = []
    for number, text in enumerate(read_user_text(path).splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CocaEvalError(f"{path} line {number}: {exc.msg}") from None
        missing = [k for k in ("index", "input", "outputs", "pred") if k not in line]
        if missing:
            raise CocaEvalError(f"{path} line {number}: no {', '.join(missing)}")
        lines.append(line)
    return lines


def prediction_cell(task: str, path: Path, length: int, printed: float, method: str) -> Cell:
    """One task's predictions at one length as a ``ruler`` cell, its mean held to RULER's summary."""
    from coca_eval.taskspec import TASKS

    ruler = TASKS.get("ruler")  # registry look-up: RULER's task definitions and scorer
    spec, score_sample = ruler.definitions().get(task), ruler.score_sample
    records = []
    for line in sorted(read_predictions(path), key=lambda x: x["index"]):
        answers = [str(a) for a in line["outputs"]]
        check_references(answers, f"{path} index {line['index']}")
        scored = score_sample(spec, str(line["pred"]), answers)
        records.append({
            "index": int(line["index"]), "answers": answers, "score": scored["score"],
            "found": scored.get("found"), "output": str(line["pred"]),
            "prompt_sha256": hashlib.sha256(str(line["input"]).encode()).hexdigest(),
            "prompt_tokens": line.get("length"), "truncation": line.get("truncation"),
        })  # fmt: skip
    if not records:
        raise CocaEvalError(f"{path} holds no predictions")
    unique_units((r["index"] for r in records), str(path))
    mean = sum(r["score"] for r in records) / len(records)
    if round(100 * mean, SCORE_DECIMALS) != round(printed, SCORE_DECIMALS):
        raise CocaEvalError(
            f"{path}: RULER's summary scores {task} {printed} but its {len(records)} predictions score "
            f"{100 * mean:.2f} under RULER's scoring"
        )
    detail = {
        "samples": records,
        "answer_budget": spec.answer_budget,
        "length_counts": "prompt+answer",
        "imported_from": {"harness": "RULER", "task": task, "file": f"{length}/pred/{path.name}"},
    }
    return Cell(task="ruler", method=method, metric="score", value=100 * mean, length=length, dataset=task,
                n=len(records), status="ok", detail=detail)  # fmt: skip


def import_ruler_predictions(folders: list[Path], method: str) -> Run:
    """RULER prediction folders (one per length) as one ``ruler`` run."""
    from coca_eval.provenance import code_provenance
    from coca_eval.taskspec import TASKS

    ruler_tasks = TASKS.get("ruler").definitions()  # registry look-up: RULER's task definitions

    cells, seen = [], set()
    for folder in folders:
        length, summary = folder_length(Path(folder)), read_summary(Path(folder))
        if length in seen:
            raise CocaEvalError(f"{folder}: a second folder for length {length}")
        seen.add(length)
        for path in sorted(Path(folder).glob("*.jsonl")):
            task = path.stem
            if task not in ruler_tasks:
                raise CocaEvalError(f"{path}: {task} is not one of RULER's thirteen tasks")
            if task not in summary:
                raise CocaEvalError(f"{path}: RULER's summary has no score for {task}")
            cells.append(prediction_cell(task, path, length, summary[task], method))
    if not cells:
        raise CocaEvalError(f"{', '.join(map(str, folders))} hold no RULER predictions (<task>.jsonl)")
    tasks = list(dict.fromkeys(c.dataset for c in cells))
    config = {
        "task": "ruler",
        "params": {
            "tasks": tasks,
            "length_counts": "prompt+answer",
            "samples": max(c.n for c in cells),
            "haystack": "RULER's",
            "chat_template": "RULER's template",
        },
        "source": {
            "harness": "RULER",
            "results": ", ".join(f"{c}/pred" for c in sorted(seen)),
            "predictions": [str(f) for f in folders],
        },
    }
    return Run(**code_provenance(), config=config, cells=cells)
