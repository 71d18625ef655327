"""Running OpenCompass as a subprocess: environment, scratch directory, progress, exit checks.

OpenCompass writes ``tmp/``, ``outputs/`` and friends into its working directory and may try to
download data it cannot find, so it runs in a scratch directory, offline, with its data cache pointed
at the user's data root. Progress is read from the files it writes (one result file per task).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

from coca_eval.errors import CocaEvalError

INSTALL_HINT = "bash scripts/install_opencompass.sh, or pip install 'coca-eval[opencompass]'"


def require_opencompass() -> None:
    """OpenCompass must be importable by this interpreter (checked without importing it)."""
    if importlib.util.find_spec("opencompass") is None:
        raise CocaEvalError(f"OpenCompass is not installed in {sys.prefix} ({INSTALL_HINT})")


def opencompass_env(data_root: Path) -> dict[str, str]:
    """Offline, data from the root, and ``coca_eval`` importable in every task process."""
    package_parent = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH", "")) if p)
    return {
        **os.environ,
        "COMPASS_DATA_CACHE": str(Path(data_root).resolve()),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": path,
        "PATH": os.pathsep.join((str(Path(sys.executable).parent), os.environ.get("PATH", ""))),
    }


def opencompass_command(
    config: Path, outputs: Path, workers: int, debug: bool, reuse: str | None = None
) -> list[str]:
    """The command line; ``reuse`` names an earlier timestamp whose finished tasks are kept."""
    command = [sys.executable, "-m", "opencompass.cli.main", str(config), "-w", str(outputs)]
    command += ["--max-num-workers", str(workers)]
    command += ["--reuse", reuse] if reuse else []
    return command + (["--debug"] if debug else [])


def run_opencompass(
    command: list[str], env: dict[str, str], scratch: Path, log: Path, tick=None, poll_s: float = 1.0
) -> None:
    """Run to completion with output in ``log``; ``tick()`` is called while it runs (progress)."""
    scratch.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as handle:
        process = subprocess.Popen(command, cwd=scratch, env=env, stdout=handle, stderr=subprocess.STDOUT)
        try:
            while process.poll() is None:
                if tick is not None:
                    tick()
                time.sleep(poll_s)
        except BaseException:
            process.terminate()
            process.wait(timeout=30)
            raise
    if tick is not None:
        tick()
    if process.returncode != 0:
        raise CocaEvalError(
            f"OpenCompass exited with status {process.returncode}: {last_line(log)} (log: {log})"
        )


def last_line(log: Path) -> str:
    try:
        lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return "no output"
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else "no output"
