"""Checking the user's data root before OpenCompass starts (it would try to download what is missing).

The root is OpenCompass's ``COMPASS_DATA_CACHE``: the directory that holds ``data/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.opencompass.datasets import BenchmarkDataset, with_subjects


def with_subjects_from(dataset: BenchmarkDataset, data_root: Path) -> BenchmarkDataset:
    """A suite named without subjects takes every subject whose test file is in the data root, and
    they must be all of them: an average over part of a suite would pass for the paper's number."""
    if not dataset.is_suite or dataset.subjects:
        return dataset
    pattern = Path(dataset.files[-1])
    directory = Path(data_root) / pattern.parent
    head, _, tail = pattern.name.partition("{subject}")
    found = sorted(
        p.name[len(head) : len(p.name) - len(tail)] for p in directory.glob(f"{head}*{tail}") if p.is_file()
    )
    if not found:
        raise CocaEvalError(f"{dataset.name}: data files missing: {directory}/{pattern.name}")
    if len(found) < dataset.all_subjects:
        raise CocaEvalError(
            f"{dataset.name}: only {len(found)} of {dataset.all_subjects} subjects in {directory}; "
            f"name the ones to run ({dataset.name}:{found[0]}) to evaluate part of it"
        )
    return with_subjects(dataset, found)


def check_data(datasets: Sequence[BenchmarkDataset], data_root: Path) -> list[BenchmarkDataset]:
    """Every file the chosen datasets read must exist: OpenCompass would try to download the rest."""
    root = Path(data_root).expanduser()
    if not root.is_dir():
        raise CocaEvalError(f"data root not found: {root} (it should hold data/SuperGLUE/..., data/mmlu/...)")
    resolved = [with_subjects_from(d, root) for d in datasets]
    for dataset in resolved:
        missing = [f for f in dataset.required_files() if not (root / f).is_file()]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise CocaEvalError(f"{dataset.name}: data file missing: {root / missing[0]}{more}")
    return resolved
