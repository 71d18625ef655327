"""An lm-evaluation-harness output directory (``--output_path`` with ``--log_samples``) as a run.

lm-eval writes ``results_<time>.json`` (aggregates, the task configs, the model and its settings) and
one ``samples_<task>_<time>.jsonl`` per task (each document, the model's answer and its per-sample
metrics). Its RULER port (``niah_*``, ``ruler_vt``, ``ruler_cwe``, ``ruler_fwe``, ``ruler_qa_*``) keeps
RULER's protocol, N counting prompt and answer budget as ours does, so those tasks become ``ruler``
cells under our task names, one per (task, length), the length read from each document's
``max_length``. Every per-sample score is lm-eval's own (read from the samples file, never from the
aggregate) and must equal what our RULER scoring gives its output, and every aggregate lm-eval printed
must be the mean of its samples: a file that disagrees is refused in one line, never imported, and so
is a RULER document whose references are all empty after normalisation (:mod:`coca_eval.references`).
The other tasks' targets are lm-eval's to score (their values are read, not redone), so they are kept as
written.

lm-eval's RULER ``process_results`` writes ``-1`` for every length a document was not generated at,
and its aggregate then prints ``-1`` for lengths the run never visited: those are placeholders, not
scores, and are dropped. lm-eval's perplexity tasks (``loglikelihood_rolling``) become
``lm-eval-perplexity`` cells (:mod:`coca_eval.imported.harness_perplexity`) and its other tasks
``lm-eval`` cells (:mod:`coca_eval.imported.harness_metrics`), both under lm-eval's own names.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from coca_eval.data.harness_logs import (
    HAYSTACK,
    RULER_NAMES,
    HarnessResults,
    HarnessSample,
    read_results,
    read_samples,
    samples_file,
)
from coca_eval.errors import CocaEvalError
from coca_eval.references import check_references
from coca_eval.results import Cell, Run, unique_units

PLACEHOLDER = -1.0  # lm-eval RULER's score for a length the document was not generated at


def ruler_record(task: str, sample: HarnessSample, where: str) -> tuple[int, dict]:
    """A sample as our RULER record (its length first): lm-eval's score, checked against ours."""
    from coca_eval.taskspec import TASKS

    ruler = TASKS.get("ruler")  # registry look-up: RULER's task definitions and scorer

    length = sample.doc.get("max_length")
    answers = sample.doc.get("outputs")
    if not isinstance(length, int) or not isinstance(answers, list) or not sample.filtered_resps:
        raise CocaEvalError(f"{where}: doc {sample.doc_id} lacks doc.max_length, doc.outputs or an answer")
    check_references([str(a) for a in answers], f"{where}: doc {sample.doc_id}")
    theirs = (sample.model_extra or {}).get(str(length))
    if not isinstance(theirs, int | float) or not 0 <= theirs <= 1:
        raise CocaEvalError(f"{where}: doc {sample.doc_id} has no score for its length {length}")
    output = str(sample.filtered_resps[0])
    ours = ruler.score_sample(ruler.definitions().get(RULER_NAMES[task]), output, [str(a) for a in answers])
    if not math.isclose(ours["score"], float(theirs), abs_tol=1e-9):
        raise CocaEvalError(
            f"{where}: doc {sample.doc_id} is scored {theirs} by lm-eval but its output earns "
            f"{ours['score']} under RULER's scoring"
        )
    record = {
        "index": int(sample.doc.get("index", sample.doc_id)),
        "answers": [str(a) for a in answers],
        "score": ours["score"],
        "found": ours.get("found"),
        "output": output,
        "doc_id": sample.doc_id,
        "prompt_sha256": sample.prompt_hash,
    }
    return length, record


def ruler_cells(task: str, results: HarnessResults, samples: list[HarnessSample], method: str, where: str):
    """``task``'s samples as one ``ruler`` cell per length; each aggregate lm-eval printed must be the
    mean of that length's samples."""
    by_length: dict[int, list[dict]] = {}
    for sample in samples:
        length, record = ruler_record(task, sample, where)
        by_length.setdefault(length, []).append(record)
    printed = results.results.get(task, {})
    generation = (results.configs.get(task) or {}).get("generation_kwargs") or {}
    cells = []
    for length, records in sorted(by_length.items()):
        records.sort(key=lambda r: r["index"])
        unique_units((r["index"] for r in records), f"{where}: {task} at {length}")
        mean = sum(r["score"] for r in records) / len(records)
        aggregate = printed.get(f"{length},none")
        if not isinstance(aggregate, int | float) or not math.isclose(aggregate, mean, abs_tol=1e-9):
            raise CocaEvalError(
                f"{where}: {task} at {length} prints {aggregate!r} but its {len(records)} samples average "
                f"{mean}"
            )
        detail = {
            "samples": records,
            "answer_budget": generation.get("max_gen_toks"),
            "chat_template": results.chat_template_sha or "none",
            "haystack": HAYSTACK,
            "length_counts": "prompt+answer",
            "imported_from": {"harness": "lm-eval", "task": task},
        }
        cells.append(
            Cell(task="ruler", method=method, metric="score", value=100 * mean, length=length,
                 dataset=RULER_NAMES[task], n=len(records), status="ok", detail=detail)
        )  # fmt: skip
    unvisited = [k for k, v in printed.items() if k.endswith(",none") and v == PLACEHOLDER]
    stray = [k for k in unvisited if int(k.split(",")[0]) in by_length]
    if stray:
        raise CocaEvalError(f"{where}: {task} prints the placeholder -1 at a length it has samples for")
    return cells


def import_harness_dir(folder: Path, method: str | None = None, tasks: list[str] | None = None) -> Run:
    """An lm-eval output directory's RULER tasks as a ``ruler`` run, or its perplexity tasks as an
    ``lm-eval`` run (see the module doc); ``tasks`` chooses among the folder's tasks."""
    from coca_eval.provenance import code_provenance

    path, results = read_results(Path(folder))
    tasks = sorted(tasks or results.results)
    missing = [t for t in tasks if t not in results.results]
    if missing:
        raise CocaEvalError(
            f"{path.name} holds no task {', '.join(missing)} (it has {', '.join(results.results)})"
        )
    family = {t: _family(t, results.configs.get(t) or {}) for t in tasks}
    kinds = sorted(set(family.values()))
    if len(kinds) > 1:
        split = "; ".join(f"--tasks {','.join(t for t in tasks if family[t] == k)}" for k in kinds)
        raise CocaEvalError(f"{path.name} holds {' and '.join(kinds)} tasks: import them apart ({split})")
    label = method or Path(str(results.model_name or results.config.get("model", "lm-eval"))).name
    if kinds == ["perplexity"]:
        return _perplexity_run(path, results, tasks, label)
    if kinds == ["other"]:
        return _metrics_run(path, results, tasks, label)
    cells = []
    for task in tasks:
        cells += ruler_cells(task, results, read_samples(path, task), label, samples_file(path, task).name)
    config = {
        "task": "ruler",
        "params": {
            "tasks": [RULER_NAMES[t] for t in tasks],
            "lengths": sorted({c.length for c in cells}),
            "length_counts": "prompt+answer",
            "samples": max((c.n for c in cells), default=0),
            "seed": results.config.get("random_seed"),
            "haystack": HAYSTACK,
            "chat_template": results.chat_template_sha or "none",
        },
        "source": _source(path, results),
    }
    return Run(**code_provenance(), config=config, cells=cells)


def _family(task: str, config: dict[str, Any]) -> str:
    """How a task is imported: RULER's port (ruler cells), a perplexity task, or under lm-eval's names."""
    from coca_eval.imported.harness_perplexity import is_perplexity_task

    if task in RULER_NAMES:
        return "RULER"
    return "perplexity" if is_perplexity_task(config) else "other"


def _metrics_run(path: Path, results: HarnessResults, tasks: list[str], label: str) -> Run:
    """lm-eval's other tasks as ``lm-eval`` cells under their own names (see harness_metrics)."""
    from coca_eval.imported.harness_metrics import TASK, metric_cells
    from coca_eval.provenance import code_provenance

    cells = []
    for task in tasks:
        printed, config = results.results[task], results.configs.get(task) or {}
        cells += metric_cells(task, printed, config, read_samples(path, task), label, path.name)
    config = {
        "task": TASK,
        "params": {
            "tasks": tasks,
            "num_fewshot": {t: (results.configs.get(t) or {}).get("num_fewshot") for t in tasks},
            "generation_kwargs": {t: (results.configs.get(t) or {}).get("generation_kwargs") for t in tasks},
            "chat_template": results.chat_template_sha or "none",
        },
        "source": _source(path, results),
    }
    return Run(**code_provenance(), config=config, cells=cells)


def _perplexity_run(path: Path, results: HarnessResults, tasks: list[str], label: str) -> Run:
    """lm-eval's perplexity tasks as ``lm-eval`` cells under their own names; the window (the model's
    max_length) is part of the protocol, so two runs with different windows are not compared."""
    from coca_eval.imported.harness_perplexity import TASK, perplexity_cells
    from coca_eval.provenance import code_provenance

    cells = []
    for task in tasks:
        cells += perplexity_cells(task, results.results[task], read_samples(path, task), label, path.name)
    config = {
        "task": TASK,
        "params": {"tasks": tasks, "max_length": _model_arg(results.config.get("model_args"), "max_length")},
        "source": _source(path, results),
    }
    return Run(**code_provenance(), config=config, cells=cells)


def _model_arg(model_args: Any, name: str) -> str | None:
    """One of lm-eval's ``--model_args`` (a ``k=v,k=v`` string or a dict), as text; None if unset."""
    if isinstance(model_args, dict):
        value = model_args.get(name)
        return None if value is None else str(value)
    for part in str(model_args or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() == name:
            return value.strip()
    return None


def _source(path: Path, results: HarnessResults) -> dict:
    return {
        "harness": "lm-eval",
        "version": results.lm_eval_version,
        "results": path.name,
        "model": results.config.get("model"),
        "model_args": results.config.get("model_args"),
    }
