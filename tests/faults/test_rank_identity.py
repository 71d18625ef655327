"""Issue 38 item 2: torchrun ranks check at start-up that they run the same thing.

Ranks started with another ``--seed`` counted one document twice and missed another in an ``ok``
cell; other ``--lengths`` left a gloo traceback on one rank and exit 0 on the other. Every rank now
gathers every rank's run identity (task, parameters, methods, weights, data) before any model loads
and refuses a mismatch in the same one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coca_eval.distributed import torchrun as torchrun_module
from coca_eval.distributed.partition import Partition
from coca_eval.distributed.torchrun import RankShare
from coca_eval.errors import CocaEvalError

HOOK = Path(__file__).parents[1] / "distributed" / "hooks" / "argv"
PPL = ["--num-docs=4", "--doc-tokens=128", "--lengths=32,64", "--stride=16"]
IDENTITY = {
    "task": "ppl",
    "task_version": 3,
    "params": {"seed": 0, "lengths": [32, 64], "dataset": "books.jsonl"},
    "methods": [{"model": "m", "rope": "none"}],
    "weights": {"m": "abc"},
    "data": "sha256:0123",
}


class Peers:
    """Stands in for ``all_gather``: this rank's value, then what rank 1 sends."""

    def __init__(self, theirs):
        self.theirs = theirs

    def __call__(self, value):
        return [value, self.theirs]


@pytest.mark.parametrize(
    ("theirs", "named"),
    [
        ({**IDENTITY, "params": {**IDENTITY["params"], "seed": 7}}, "params (seed) differ"),
        ({**IDENTITY, "params": {**IDENTITY["params"], "lengths": [32]}}, "params (lengths) differ"),
        ({**IDENTITY, "weights": {"m": "other"}}, "weights differ"),
        ({**IDENTITY, "data": "sha256:4567"}, "data differ"),
    ],
)
def test_a_rank_with_another_identity_is_refused(monkeypatch, theirs, named):
    monkeypatch.setattr(torchrun_module, "all_gather", Peers(theirs))
    with pytest.raises(CocaEvalError) as refused:
        RankShare(Partition(0, 2)).agree(IDENTITY)
    assert str(refused.value).startswith(f"torchrun rank 1 runs another run than rank 0: {named}")


def test_ranks_with_one_identity_agree(monkeypatch):
    monkeypatch.setattr(torchrun_module, "all_gather", Peers(dict(IDENTITY)))
    RankShare(Partition(1, 2)).agree(dict(IDENTITY))


def _torchrun(tmp_path, model, corpus, rank1_extra: str):
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HOOK), os.environ.get("PYTHONPATH", "")]),
        "OMP_NUM_THREADS": "1",
        "COCA_EVAL_TEST_ARGV_RANK": "1",
        "COCA_EVAL_TEST_ARGV": rank1_extra,
    }
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               "-m", "coca_eval", "ppl", "--model", str(model), "--rope", "none", *PPL,
               f"--dataset={corpus}", "--output", str(tmp_path / "ranks.json")]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.torchrun
@pytest.mark.slow
@pytest.mark.parametrize(
    ("extra", "named"), [("--seed 7", "params (seed)"), ("--lengths 32", "params (lengths)")]
)
def test_ranks_started_differently_refuse_in_one_line_each(
    tmp_path, tiny_llama_dir, corpus_file, extra, named
):
    result = _torchrun(tmp_path, tiny_llama_dir, corpus_file, extra)
    assert result.returncode != 0
    line = f"coca-eval: error: torchrun rank 1 runs another run than rank 0: {named} differ"
    ours = [row for row in result.stderr.splitlines() if "coca-eval: error:" in row]
    assert len(ours) == 2 and all(row.startswith(line) for row in ours), result.stderr[-3000:]
    # the launcher reports the failed child with a traceback of its own; no rank prints one
    assert "gloo" not in result.stderr.lower(), result.stderr[-3000:]
    assert not [row for row in result.stderr.splitlines() if "File" in row and "coca_eval" in row]
    assert "exitcode  : 2" in result.stderr
    assert not (tmp_path / "ranks.json").exists()
    assert not list(tmp_path.glob("*.journal.jsonl"))  # refused before any journal was opened
