"""``coca-eval opencompass``: config, subprocess, result files -> a run of ``opencompass`` cells.

Also the import of an existing summary CSV, so numbers from an OpenCompass run made elsewhere land in
the same result contract and the same Table 5.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic
from coca_eval.methods import MethodSpec
from coca_eval.opencompass.config import ModelSettings, config_text, model_abbrs
from coca_eval.opencompass.data_root import check_data
from coca_eval.opencompass.datasets import BenchmarkDataset, parse_datasets
from coca_eval.opencompass.outputs import collect_cells, expected_abbrs, latest_output
from coca_eval.opencompass.runner import (
    opencompass_command,
    opencompass_env,
    require_opencompass,
    run_opencompass,
)
from coca_eval.opencompass.summary import summary_cells
from coca_eval.provenance import code_provenance
from coca_eval.results import Run
from coca_eval.taskspec import save_run_in_points

PRESET = "opencompass-table5"


def preset_datasets(name: str = PRESET) -> list[str]:
    from coca_eval.presets import get_preset

    return list(get_preset(name, task="opencompass").params.get("datasets") or [])


def resolve_datasets(spec: str | Sequence[str], data_root: Path) -> list[BenchmarkDataset]:
    """The chosen datasets with their subjects, after checking every data file they need exists."""
    preset = preset_datasets() if "table5" in str(spec).lower() else []
    return check_data(parse_datasets(spec, preset), data_root)


def evaluate_opencompass(
    methods: Sequence[MethodSpec],
    datasets: str | Sequence[str],
    data_root: Path,
    work_dir: Path | None = None,
    output: Path | None = None,
    settings: ModelSettings | None = None,
    console: Console | None = None,
    workers: int = 1,
) -> Run:
    """Run OpenCompass on every method and dataset; error cells for failed tasks, then a one-line
    error naming the first failure and its log (after ``output`` is written)."""
    from coca_eval.models.presets import model_fingerprint

    require_opencompass()
    settings = settings or ModelSettings()
    chosen = resolve_datasets(datasets, data_root)
    weights = {m.model: model_fingerprint(m.model) for m in methods}  # fails fast on a missing model
    abbrs = model_abbrs(methods)
    work = _work_dir(work_dir, output)
    config = work / "config.py"
    write_atomic(config, config_text(abbrs, chosen, data_root, settings))
    outputs, log = work / "outputs", work / "opencompass.log"
    reuse = reusable_output(work, _identity(abbrs, chosen, data_root, settings, weights))
    before = set() if reuse else set(outputs.glob("*")) if outputs.is_dir() else set()
    total = len(abbrs) * sum(len(expected_abbrs(d)) for d in chosen)
    command = opencompass_command(config, outputs, workers, debug=False, reuse=reuse)
    with _progress(console) as bar:
        task = bar.add_task("OpenCompass tasks", total=total)
        tick = lambda: bar.update(task, completed=_results_written(outputs, before))  # noqa: E731
        run_opencompass(command, opencompass_env(data_root), work / "scratch", log, tick)
    cells, failures = collect_cells(latest_output(outputs), {a: m.label for a, m in abbrs.items()}, chosen)
    run_config = _config(abbrs, chosen, data_root, work, settings, weights)
    run = Run(**code_provenance(), config=run_config, cells=cells)
    if output is not None:
        save_run_in_points(run, Path(output))
    if failures:
        more = f" ({len(failures) - 1} more failed)" if len(failures) > 1 else ""
        raise CocaEvalError(failures[0].message() + more)
    return run


def _work_dir(work_dir: Path | None, output: Path | None) -> Path:
    """``--work-dir``, else beside ``--output`` (so a rerun can resume), else a fresh temporary one."""
    if work_dir is not None:
        return Path(work_dir).resolve()
    if output is not None:
        return Path(output).with_suffix(".opencompass").resolve()
    return Path(tempfile.mkdtemp(prefix="coca-eval-opencompass-")).resolve()


def _identity(abbrs, chosen, data_root, settings: ModelSettings, weights) -> dict:
    """What the numbers in a work directory depend on: results are reused only when all of it matches."""
    return {
        "methods": {a: m.identity() for a, m in abbrs.items()},
        "weights": weights,
        "datasets": [d.name for d in chosen],
        "data_root": str(Path(data_root).resolve()),
        "settings": {"max_seq_len": settings.max_seq_len, "max_out_len": settings.max_out_len},
    }


def reusable_output(work: Path, identity: dict) -> str | None:
    """The timestamp of an earlier run in ``work`` made with the same identity, for OpenCompass's
    ``--reuse`` (it skips tasks whose predictions and results exist); None starts afresh.

    The marker file records the identity and when it was first used here; only outputs stamped since
    then count, so a changed model or setting never reuses another's results, even after a crash."""
    marker = work / "identity.json"
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = {}
    if recorded.get("identity") != identity:
        since = datetime.now().strftime("%Y%m%d_%H%M%S")  # OpenCompass's own stamp format
        write_atomic(marker, json.dumps({"identity": identity, "since": since}, indent=1, sort_keys=True))
        return None
    try:
        latest = latest_output(work / "outputs").name
    except CocaEvalError:
        return None
    return latest if latest >= recorded.get("since", "") else None


def import_summary(path: Path, output: Path | None = None) -> Run:
    """An OpenCompass summary CSV as a run (model columns become methods)."""
    cells = summary_cells(Path(path))
    if not cells:
        raise CocaEvalError(f"{path} holds no results")
    config = {"task": "opencompass", "source": {"summary": str(Path(path).resolve())}}
    run = Run(**code_provenance(), config=config, cells=cells)
    if output is not None:
        save_run_in_points(run, Path(output))
    return run


def _progress(console: Console | None) -> Progress:
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console or Console(stderr=True))


def _results_written(outputs: Path, before: set[Path]) -> int:
    """Result files of this run (a reused work directory keeps older timestamped outputs)."""
    fresh = [d for d in outputs.glob("*") if d not in before] if outputs.is_dir() else []
    return sum(len(list((d / "results").glob("*/*.json"))) for d in fresh)


def _config(abbrs, chosen, data_root, work, settings: ModelSettings, weights) -> dict:
    return {
        "task": "opencompass",
        "params": {
            "datasets": [d.name if not d.subjects else f"{d.name}:{'+'.join(d.subjects)}" for d in chosen],
            "max_seq_len": settings.max_seq_len,
            "max_out_len": settings.max_out_len,
        },
        "data_root": str(Path(data_root).resolve()),
        "work_dir": str(work),
        "weights": weights,
        "methods": [{"label": m.label, "abbr": a, **m.identity()} for a, m in abbrs.items()],
        "environment": {"device": settings.device, "batch_size": settings.batch_size},
    }
