"""W&B and Trackio take the same calls (``init``, ``log`` a dict of tables and images, ``finish``), so
one function logs a run to either. Each library is an optional extra, imported only when asked for."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pandas as pd

from coca_eval.errors import CocaEvalError
from coca_eval.exports.run_tables import RunExport


@dataclass(frozen=True)
class Logged:
    """What one export sent: how many tables and plots, where the tracker keeps the run, and what the
    library warned meanwhile (a tracker that cannot write says so only as a warning)."""

    tables: list[str]
    plots: list[str]
    location: str
    warned: list[str] = field(default_factory=list)

    def entries(self) -> list[str]:
        return [*self.tables, *self.plots]

    def refuse(self, tracker: str, what: str, missing: list[str]) -> None:
        """Raise the one line that says the run was not stored: what is missing and the library's own
        reason (its first warning that something failed or was skipped, else its first at all)."""
        if not missing:
            return
        failures = [w for w in self.warned if "could not" in w or "fail" in w or "skipped" in w]
        reason = next(iter(failures or self.warned), "")
        reason = f": {reason.strip().splitlines()[0]}" if reason.strip() else ""
        count = len(self.entries())
        lost = f"none of its {count}" if len(missing) == count else f"{len(missing)} of its {count}"
        raise CocaEvalError(
            f"{tracker} did not store {what} ({lost} tables and plots, e.g. {missing[0]!r}){reason}; the "
            "export failed"
        )


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
    protocol and provenance are its config. The library's own chatter is kept off the terminal, and an
    error it raises (a folder it cannot write, no key) is one line, not its traceback."""
    os.environ.setdefault("WANDB_SILENT", "true")  # W&B's banner; the command prints where the run is
    quiet = contextlib.redirect_stdout(io.StringIO())
    with tempfile.TemporaryDirectory() as plots_dir, quiet, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        plots = export.draw_plots(Path(plots_dir))
        try:
            tables, location = _send(tracker, export, project, name, plots, init)
        except Exception as error:  # noqa: BLE001  (each library fails its own way)
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise CocaEvalError(
                f"{tracker.__name__} could not store the run: {type(error).__name__}: {first}"
            ) from None
    said = [str(w.message) for w in warned]
    return Logged(tables, [f"plots/{png.stem}" for _, png in plots], location, said)


def _send(tracker: ModuleType, export: RunExport, project: str, name: str, plots, init: dict):
    """Start the run, log it in one step and finish it; the table keys and the run's local folder."""
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
    return tables, location


def check_trackio(logged: Logged, project: str, name: str, where: Path) -> None:
    """Read the run back through Trackio's own storage: every table and plot must be in its logs. A
    folder it cannot write makes Trackio warn and go on ("could not be persisted"), so without this
    the export would say it succeeded and leave nothing."""
    from trackio.sqlite_storage import SQLiteStorage

    try:
        logs = SQLiteStorage.get_logs(project, name)
    except Exception:  # noqa: BLE001  (any failure to read it back means it was not stored)
        logs = []
    stored = {key for log in logs or [] for key in log}
    missing = [key for key in logged.entries() if key not in stored]
    logged.refuse("Trackio", f"run {name!r} of project {project!r} under {where}", missing)


def check_wandb(logged: Logged) -> None:
    """What W&B wrote for the run, in its own run folder: the transaction log ``wandb sync`` sends (or
    that the online run streamed) and a media file per table and plot."""
    folder = Path(logged.location) if logged.location else None
    log_files = list(folder.glob("run-*.wandb")) if folder is not None and folder.is_dir() else []
    media = folder / "files" / "media" if folder is not None else Path()
    tables = [p.name for p in media.glob("table/**/*.table.json")]
    images = [p.name for p in media.glob("images/**/*") if p.is_file()]

    def kept(key: str) -> bool:  # W&B names a media file after its key's last part: cells_0_<hash>
        base = key.rsplit("/", 1)[-1]
        return any(name.startswith(f"{base}_") for name in (images if key.startswith("plots/") else tables))

    stored = any(p.stat().st_size > 0 for p in log_files)
    missing = logged.entries() if not stored else [key for key in logged.entries() if not kept(key)]
    logged.refuse("W&B", f"the run in {folder or 'its run folder'}", list(missing))


def keep_wandb_under(directory: Path) -> None:
    """With ``--dir``, everything W&B writes stays there: its run folder, and (unless set already) the
    staging area of the tables it syncs later, its logs and its settings, which it would otherwise put
    under the home directory. Each folder must take a file before W&B starts: W&B itself goes on when
    one cannot (its logs then pour onto the terminal, or it stops in its own traceback)."""
    base = Path(directory).resolve() / "wandb"
    for variable, name in _WANDB_FOLDERS.items():
        os.environ.setdefault(variable, str(base / name))
    for folder in (Path(directory), base, *(Path(os.environ[v]) for v in _WANDB_FOLDERS)):
        _writable(folder, directory)


_WANDB_FOLDERS = {"WANDB_DATA_DIR": "data", "WANDB_CACHE_DIR": "cache", "WANDB_CONFIG_DIR": "config"}


def _writable(folder: Path, directory: Path) -> None:
    """Make ``folder`` and write a file in it (and remove it), or one line saying why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise CocaEvalError(
            f"--dir {directory}: W&B cannot write {folder} ({error.strerror or error}); name a folder it can"
        ) from None


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
