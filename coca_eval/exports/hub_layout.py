"""A run as a Hub dataset repository in the layout lm-evaluation-harness's Hub logging writes
(``--hf_hub_log_args``, lm-eval 0.4.13): a folder per model (here per method) holding
``results_<date>.json`` and one ``samples_<task>_<date>.jsonl`` per task, and a dataset card whose
``configs`` name each (``<model>__<task>`` and ``<model>__results``, a split per date plus ``latest``),
so the Hub's dataset viewer and ``datasets.load_dataset(repo, name=...)`` read it as they read lm-eval's.

The names follow lm-eval's rules (its ``sanitize_model_name`` and ``sanitize_task_name``; a date with no
underscore, so ``samples_<task>_<date>`` splits back into task and date). A "task" here is what a
results table row names: RULER's, HELMET's and BABILong's sub-tasks by their own names (as lm-eval's
ports name them), else the task; its numbers are keyed by length, ``"4096,none"``, as lm-eval's RULER
port keys them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import yaml

from coca_eval.errors import CocaEvalError
from coca_eval.exports.run_tables import RunExport, unit_records
from coca_eval.files import write_atomic
from coca_eval.results import Cell


def model_folder(label: str) -> str:
    """A method's label as lm-eval names a model's folder (its ``sanitize_model_name``)."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", label)


def config_task(name: str) -> str:
    """A task's name as lm-eval puts it in a config name (its ``sanitize_task_name``)."""
    return re.sub(r"\W", "_", name)


def date_id(created: str) -> str:
    """The run's creation time as lm-eval stamps its files: ISO, ``:`` replaced by ``-``."""
    return datetime.fromisoformat(created).replace(tzinfo=None).isoformat().replace(":", "-")


def write_layout(export: RunExport, folder: Path) -> list[Path]:
    """The repository's files under ``folder`` (results, samples, the card); returns their paths."""
    stamp = date_id(export.run.created)
    written = []
    for method in dict.fromkeys(c.method for c in export.run.cells):
        cells = [c for c in export.run.cells if c.method == method]
        base = folder / model_folder(method)
        results = base / f"results_{stamp}.json"
        write_atomic(results, json.dumps(_results(export, method, cells), indent=2) + "\n")
        written.append(results)
        for task, lines in _samples(cells).items():
            path = base / f"samples_{task}_{stamp}.jsonl"
            write_atomic(path, "".join(json.dumps(line) + "\n" for line in lines))
            written.append(path)
    card = folder / "README.md"
    write_atomic(card, dataset_card(export, [p.relative_to(folder) for p in written]))
    return [*written, card]


def push_layout(folder: Path, repo_id: str, private: bool, token: str | None) -> str:
    """Create the dataset repository (or reuse it) and upload the folder in one commit; its URL."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(token=token)
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id, folder_path=folder, repo_type="dataset", commit_message="coca-eval results"
        )
        listed = api.list_repo_tree(repo_id, repo_type="dataset", recursive=True)
        stored = {entry.path: entry.size for entry in listed if isinstance(entry, RepoFile)}
    except unreachable() as error:  # no route to the Hub (offline, no DNS, a refused connection)
        raise CocaEvalError(
            f"the Hub could not be reached to upload to {repo_id} ({type(error).__name__}: {_first(error)}); "
            "the upload is not done; run it again once the Hub can be reached (--out keeps the files)"
        ) from None
    except (HfHubHTTPError, OSError, ValueError) as error:  # the Hub's refusal
        raise CocaEvalError(f"the Hub refused the upload to {repo_id}: {_first(error)}") from None
    _check_stored(folder, repo_id, stored)
    return str(url)


def unreachable() -> tuple[type[BaseException], ...]:
    """The errors of not reaching the Hub at all: offline mode, and the transport errors of the HTTP
    client ``huggingface_hub`` calls through (``httpx2`` or ``httpx`` in newer releases, ``requests`` in
    older ones), which are not ``OSError``s and would otherwise end the command in a traceback."""
    import importlib

    from huggingface_hub.errors import OfflineModeIsEnabled

    found: list[type[BaseException]] = [OfflineModeIsEnabled]
    for module, name in (
        ("httpx2", "TransportError"),
        ("httpx", "TransportError"),
        ("requests", "ConnectionError"),
    ):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def _first(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _check_stored(folder: Path, repo_id: str, stored: dict[str, int]) -> None:
    """Every file written must be listed by the repository afterwards, at its size: an upload the Hub
    acknowledged but did not keep is not called done."""
    files = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    missing = sorted(path for path, size in files.items() if stored.get(path) != size)
    if missing:
        raise CocaEvalError(
            f"the Hub did not keep {len(missing)} of the {len(files)} files uploaded to {repo_id} (e.g. "
            f"{missing[0]}): the repository does not list them at their size"
        )


def row_name(cell: Cell) -> str:
    """The name lm-eval's ports give a table row: the sub-task where there is one, else the task."""
    return cell.dataset or cell.task


def _results(export: RunExport, method: str, cells: list[Cell]) -> dict:
    """lm-eval's results file: ``results`` (a metric key per length), ``n-samples``, ``config``, the
    model's names and the date; coca-eval's own provenance under ``coca_eval_config``."""
    results: dict[str, dict] = {}
    samples: dict[str, dict] = {}
    for cell in cells:
        name = row_name(cell)
        entry = results.setdefault(name, {"alias": name})
        entry[_metric_key(cell, cells)] = cell.value if cell.status == "ok" else cell.status
        count = samples.setdefault(name, {"original": 0, "effective": 0})
        count["original"] = count["effective"] = count["original"] + (cell.n or 0)
    return {
        "results": results,
        "n-samples": samples,
        "config": {"model": "coca-eval", "model_args": _method_record(export, method)},
        "model_name": method,
        "model_name_sanitized": model_folder(method),
        "date": datetime.fromisoformat(export.run.created).timestamp(),
        "coca_eval_config": export.config(),
    }


def _metric_key(cell: Cell, cells: list[Cell]) -> str:
    """``"4096,none"`` as lm-eval's RULER port keys a length; the metric's name joins it where one row
    holds several metrics, and stands alone for a cell without a length."""
    if cell.length is None:
        return f"{cell.metric},none"
    metrics = {c.metric for c in cells if row_name(c) == row_name(cell)}
    return f"{cell.length},none" if len(metrics) == 1 else f"{cell.metric}_{cell.length},none"


def _samples(cells: Iterable[Cell]) -> dict[str, list[dict]]:
    """Per row name, every sample's record, with its length and ``doc_id`` (the sample's index), the
    fields lm-eval's viewers sort and join on."""
    lines: dict[str, list[dict]] = {}
    for cell in cells:
        for record in unit_records(cell):
            line = {"doc_id": record.get("index"), "length": cell.length, "metric": cell.metric, **record}
            lines.setdefault(config_task(row_name(cell)), []).append(line)
    return lines


def _method_record(export: RunExport, method: str) -> dict:
    for entry in export.run.config.get("methods") or []:
        if entry.get("label") == method:
            return entry
    return {"label": method}


def dataset_card(export: RunExport, files: list[Path]) -> str:
    """The card's YAML ``configs`` (one per model and task, and per model's results; a split named by
    the date and ``latest``), then a short summary of where the numbers came from."""
    stamp = re.sub(r"[^\w.]", "_", date_id(export.run.created))
    configs = []
    for path in files:
        model, name = path.parent.as_posix(), path.name
        task = "results" if name.startswith("results_") else name[name.find("_") + 1 : name.rfind("_")]
        data_files = [{"split": split, "path": [path.as_posix()]} for split in (stamp, "latest")]
        configs.append({"config_name": f"{model}__{config_task(task)}", "data_files": data_files})
    card = {"pretty_name": f"coca-eval run {export.name}", "configs": configs}
    header = yaml.safe_dump(card, sort_keys=False)
    tasks = ", ".join(export.tasks())
    return (
        f"---\n{header}---\n\n# coca-eval run {export.name}\n\n"
        f"Tasks: {tasks}. Methods: {', '.join(dict.fromkeys(c.method for c in export.run.cells))}.\n"
        f"Made by coca-eval {export.run.coca_eval_version} on {export.run.created}.\n\n"
        "Each configuration is one method's samples for one task (`<method>__<task>`) or its results "
        "(`<method>__results`); the split `latest` is this run.\n"
    )
