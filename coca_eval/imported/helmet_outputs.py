"""HELMET's ``eval.py`` outputs (one ``.json`` per dataset and length) as a ``helmet`` run.

Each file holds HELMET's arguments (``args``: the datasets, ``input_max_length``, the seed, the chat
setting), every sample (``data``: the test item, the model's ``output`` and the metrics HELMET's
post-processing gave it) and their means (``averaged_metrics``, x 100). A file becomes one ``helmet``
cell under ``--protocol helmet`` (HELMET's own units and truncation): the task's metric per sample is
HELMET's own, and must equal what this project's HELMET scoring gives the sample's output; the cell's
value must equal HELMET's average of that metric. A file that disagrees is refused in one line, and so
is a sample whose answers are all empty after normalisation (:mod:`coca_eval.references`) or an ``id``
met twice (the sample would count twice).

Samples keep their position in the file as their index: HELMET picks them with its seed, as
``coca-eval helmet --protocol helmet`` does, so a run of ours on the same files, seed and sample count
holds the same samples at the same indices, and the gate pairs them (their references are checked).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.references import check_references
from coca_eval.results import Cell, Run, unique_units


class HelmetOutput(BaseModel):
    """One HELMET output file: the fields the import reads."""

    model_config = ConfigDict(extra="allow")

    args: dict[str, Any]
    data: list[dict[str, Any]]
    averaged_metrics: dict[str, float]


def our_task(dataset: str):
    """HELMET's dataset name as our task (its ICL names carry the shot count: ``icl_trec_coarse_6600shot
    _balance``); a dataset outside the model-development categories is refused."""
    from coca_eval.helmet.tasks import HELMET_TASKS

    name = re.sub(r"_\d+shot(_balance)?$", "", dataset)
    if name not in HELMET_TASKS:
        raise CocaEvalError(
            f"HELMET dataset {dataset!r} cannot be imported (its tasks: {', '.join(HELMET_TASKS.names())})"
        )
    return HELMET_TASKS.get(name)


def read_output(path: Path) -> HelmetOutput:
    try:
        return HelmetOutput.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CocaEvalError(f"cannot read {path} ({type(exc).__name__})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        raise CocaEvalError(f"{path}: {'.'.join(map(str, error['loc']))}: {error['msg']}") from None


def _single(args: dict, key: str, path: Path) -> str:
    """``args[key]`` of a file written for one dataset (HELMET writes one file per dataset and length)."""
    value = str(args.get(key, ""))
    if not value or "," in value:
        raise CocaEvalError(
            f"{path}: args.{key} is {value!r}, not one value (one file per dataset and length)"
        )
    return value


def _references(task, item: dict, path: Path, number: int) -> list[str]:
    """The sample's references as our records keep them (re-rank: ``passage_id:label`` by label)."""
    if task.family == "rerank":
        qrel = item.get("qrel")
        if not isinstance(qrel, list):
            raise CocaEvalError(f"{path}: data[{number}] has no qrel")
        ranked = sorted(qrel, key=lambda q: int(q[1]), reverse=True)
        return [f"{pid}:{label}" for pid, label in ranked]
    answer = item.get("answer")
    if answer is None:
        raise CocaEvalError(f"{path}: data[{number}] has no answer")
    if isinstance(answer, str | int):
        return [str(answer)]
    return [str(a) for a in (answer[0] if answer and isinstance(answer[0], list) else answer)]


def helmet_cell(path: Path, method: str) -> Cell:
    """One HELMET output file as one cell (see the module doc)."""
    from coca_eval.helmet.scoring import score_answer

    output = read_output(path)
    dataset = _single(output.args, "datasets", path)
    task = our_task(dataset)
    length = int(_single(output.args, "input_max_length", path))
    metric = task.metric if task.metric in output.averaged_metrics else None
    if metric is None:
        raise CocaEvalError(
            f"{path}: averaged_metrics has no {task.metric} (HELMET's metric for {task.name})"
        )
    ids = [item.get("id") for item in output.data]
    if None not in ids:  # RAG rows carry HELMET's id; the others have no identity but their place
        unique_units(ids, str(path), "sample id")
    records = []
    for number, item in enumerate(output.data):
        answers = _references(task, item, path, number)
        check_references(answers, f"{path}: data[{number}]")
        text = item.get("output")
        theirs = item.get(metric)
        if not isinstance(text, str) or not isinstance(theirs, int | float | bool):
            raise CocaEvalError(f"{path}: data[{number}] lacks output or {metric}")
        ours = score_answer(task, text, answers)
        if not math.isclose(ours["score"], float(theirs), abs_tol=1e-6):
            raise CocaEvalError(
                f"{path}: data[{number}] has {metric} {float(theirs)} but its output earns {ours['score']} "
                "under HELMET's scoring"
            )
        records.append(
            {"index": number, "answers": answers, "output": text, **ours, "input_len": item.get("input_len")}
        )
    mean = sum(r["score"] for r in records) / len(records) if records else math.nan
    if not records or not math.isclose(100 * mean, output.averaged_metrics[metric], abs_tol=1e-6):
        raise CocaEvalError(
            f"{path}: averaged_metrics.{metric} is {output.averaged_metrics[metric]} but its {len(records)} "
            f"samples average {100 * mean}"
        )
    detail = {
        "samples": records,
        "protocol": "helmet",
        "category": task.category,
        "answer_budget": int(_single(output.args, "generation_max_length", path)),
        "chat_template": "helmet" if output.args.get("use_chat_template") else "none",
        "imported_from": {"harness": "helmet", "file": Path(path).name},
    }
    return Cell(task="helmet", method=method, metric="score", value=100 * mean, length=length,
                dataset=task.name, n=len(records), status="ok", detail=detail)  # fmt: skip


def import_helmet_outputs(paths: list[Path], method: str | None = None) -> Run:
    """HELMET output files (one per dataset and length) as one ``helmet`` run."""
    from coca_eval.provenance import code_provenance

    if not paths:
        raise CocaEvalError("no HELMET output files given")
    first = read_output(paths[0])
    label = method or Path(str(first.args.get("model_name_or_path", "helmet"))).name
    cells = [helmet_cell(Path(p), label) for p in paths]
    seeds = {read_output(p).args.get("seed") for p in paths}
    config = {
        "task": "helmet",
        "params": {
            "tasks": list(dict.fromkeys(c.dataset for c in cells)),
            "protocol": "helmet",
            "samples": max(c.n for c in cells),
            "seed": seeds.pop() if len(seeds) == 1 else None,
            "chat_template": cells[0].detail["chat_template"],
        },
        "source": {"harness": "helmet", "results": ", ".join(Path(p).name for p in paths)},
    }
    return Run(**code_provenance(), config=config, cells=cells)
