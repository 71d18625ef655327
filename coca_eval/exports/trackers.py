"""W&B and Trackio take the same calls (``init``, ``log`` a dict of tables and images, ``finish``), so
one function logs a run to either. Each library is an optional extra, imported only when asked for."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pandas as pd

from coca_eval.errors import CocaEvalError
from coca_eval.exports.run_tables import RunExport


@dataclass(frozen=True)
class Logged:
    """What one export sent: how many tables and plots, and where the tracker keeps the run."""

    tables: list[str]
    plots: list[str]
    location: str


def import_tracker(module: str, command: str) -> ModuleType:
    """The tracker's package, or one line saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise CocaEvalError(
            f"{command} needs the {module} package: pip install 'coca-eval[export]' (or pip install {module})"
        ) from None


def log_run(tracker: ModuleType, export: RunExport, project: str, name: str, **init: object) -> Logged:
    """One tracker run holding the run's tables (a row per method, a column per length, per task), every
    cell with its interval, every sample's record per task, and the report's plots as images; the run's
    protocol and provenance are its config. The library's own chatter is kept off the terminal."""
    os.environ.setdefault("WANDB_SILENT", "true")  # W&B's banner; the command prints where the run is
    with tempfile.TemporaryDirectory() as plots_dir, contextlib.redirect_stdout(io.StringIO()):
        plots = export.draw_plots(Path(plots_dir))
        run = tracker.init(project=project, name=name, config=export.config(), **init)
        payload = {f"{task}/table": _table(tracker, frame) for task, frame in export.task_tables().items()}
        payload["cells"] = _table(tracker, export.cells_frame())
        payload |= {
            f"{task}/samples": _table(tracker, pd.DataFrame([_flat(r) for r in records]))
            for task, records in export.samples().items()
        }
        tables = list(payload)
        payload |= {f"plots/{png.stem}": tracker.Image(str(png), caption=caption) for caption, png in plots}
        tracker.log(payload)
        location = str(Path(run.dir).parent) if getattr(run, "dir", None) else ""
        tracker.finish()
    return Logged(tables, [f"plots/{png.stem}" for _, png in plots], location)


def keep_wandb_under(directory: Path) -> None:
    """With ``--dir``, everything W&B writes stays there: its run folder, and (unless set already) the
    staging area of the tables it syncs later, its logs and its settings, which it would otherwise put
    under the home directory."""
    directory.mkdir(parents=True, exist_ok=True)
    base = Path(directory).resolve() / "wandb"
    for variable, name in (
        ("WANDB_DATA_DIR", "data"),
        ("WANDB_CACHE_DIR", "cache"),
        ("WANDB_CONFIG_DIR", "config"),
    ):
        os.environ.setdefault(variable, str(base / name))


def trackio_dir(directory: Path | None) -> Path:
    """Where Trackio keeps its projects: ``--dir`` when given, else its own default (``TRACKIO_DIR``,
    else its folder in the Hugging Face cache). Set before Trackio is imported, which reads it once."""
    if directory is not None:
        os.environ["TRACKIO_DIR"] = str(Path(directory).resolve())
        return Path(os.environ["TRACKIO_DIR"])
    if os.environ.get("TRACKIO_DIR"):
        return Path(os.environ["TRACKIO_DIR"])
    from huggingface_hub.constants import HF_HOME

    return Path(HF_HOME) / "trackio"


def _table(tracker: ModuleType, frame: pd.DataFrame):
    """A tracker table; a failed cell's status shares a column with numbers, so types may mix."""
    return tracker.Table(dataframe=frame, allow_mixed_types=True)


def _flat(record: dict) -> dict:
    """A sample's record with nested values (lists, dicts) as JSON text, which every table shows."""
    return {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in record.items()}
