"""A Hugging Face cache laid out by hand (``models--org--name/refs/main``, ``snapshots/<commit>/``), so
hub ids resolve offline in tests without a download."""

from __future__ import annotations

import shutil
from pathlib import Path

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40


def cache_snapshot(cache: Path, repo_id: str, commit: str, source: Path | None = None) -> Path:
    """Add ``commit``'s snapshot (a copy of the model directory ``source``, else a bare config) and point
    ``refs/main`` at it, as a download of that commit would."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    if source is not None:
        shutil.copytree(source, snapshot)
    else:
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text('{"model_type": "llama"}')
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def point_main_at(cache: Path, repo_id: str, commit: str) -> None:
    (cache / f"models--{repo_id.replace('/', '--')}" / "refs" / "main").write_text(commit)
