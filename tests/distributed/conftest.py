"""Shared helpers of the split-run tests: one task run whole and as ``--shard K/N`` runs, in process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

SHARDS = 3


@pytest.fixture
def task_runs(tmp_path, corpus_file, tiny_llama_dir):
    """``task_runs(task) -> (whole Run, [shard paths])``: the same protocol run whole and as three
    shards, each writing its results file (and journal) under ``tmp_path``; the whole run as its
    results file reads back."""
    from split_runs import run_task

    from coca_eval.results import load_run

    def runs(task: str, **overrides):
        run_task(task, tmp_path / f"{task}-whole.json", tiny_llama_dir, corpus_file, **overrides)
        whole = load_run(tmp_path / f"{task}-whole.json")
        paths = []
        for index in range(SHARDS):
            path = tmp_path / f"{task}-shard{index + 1}.json"
            run_task(task, path, tiny_llama_dir, corpus_file, shard=(index, SHARDS), **overrides)
            paths.append(path)
        return whole, paths

    return runs
