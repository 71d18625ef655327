"""Shared helpers of the analyses' tests: run one analysis through the api on a tiny checkpoint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def analyse(tmp_path, corpus_file):
    """``analyse(name, model_dir, rope="none", **params) -> Run`` over the tiny corpus."""
    from coca_eval.analyses.params import make_params
    from coca_eval.api import evaluate
    from coca_eval.methods import make_method

    def run(name: str, model: Path, rope: str = "none", output: Path | None = None, **values):
        values = {"dataset": str(corpus_file), "num_docs": 2, "lengths": "64", **values}
        method = make_method(str(model), rope, None, "float32", "hf")
        return evaluate(name, [method], make_params(name, values), output or tmp_path / f"{name}.json")

    return run
