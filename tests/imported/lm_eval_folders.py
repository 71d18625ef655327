"""The committed lm-eval 0.4.13 RULER output folder (``data/lm_eval_ruler``) and the edits tests plant
in a copy of it: the import's tests and ``ruler --replay``'s read the same folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

LM_EVAL_RULER = Path(__file__).parent / "data" / "lm_eval_ruler"


def copy_lm_eval_ruler(tmp_path: Path) -> Path:
    folder = tmp_path / "lmeval"
    shutil.copytree(LM_EVAL_RULER, folder)
    return folder


def rewrite_samples(folder: Path, task: str, change) -> None:
    """Every line of ``task``'s samples file replaced by ``change(line)``."""
    path = next(folder.glob(f"samples_{task}_*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(s)) + "\n" for s in lines))


def rewrite_results(folder: Path, change) -> None:
    """The results file replaced by ``change(results)``."""
    path = next(folder.glob("results_*.json"))
    path.write_text(json.dumps(change(json.loads(path.read_text()))))
