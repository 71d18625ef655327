"""The real torchrun on CPU (gloo, two ranks): the same cells as one process, quiet ranks, resume after
a rank is killed, and an out-of-memory rank that does not leave its peer waiting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from split_runs import PROTOCOLS, cells_without_place, run_task

from coca_eval.results import load_run

pytestmark = [pytest.mark.torchrun, pytest.mark.slow]

HOOKS = Path(__file__).parent / "hooks"


def torchrun(task: str, output: Path, model: Path, corpus: Path, hook: str | None = None, **env: str):
    """``torchrun --nproc-per-node 2 -m coca_eval TASK ...`` under the protocol of :data:`PROTOCOLS`."""
    options = [f"--{key.replace('_', '-')}={value}" for key, value in PROTOCOLS[task].items()]
    if task != "passkey":
        options.append(f"--dataset={corpus}")
    path = [str(HOOKS / hook)] if hook else []
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")]),
                   "OMP_NUM_THREADS": "1", **env}  # fmt: skip
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               "-m", "coca_eval", task, "--model", str(model), "--rope", "none", *options,
               "--output", str(output)]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)


def parts_of(journal: Path) -> list[tuple[str, str]]:
    entries = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    return [(e["key"], e["part"]) for e in entries if e["kind"] == "part"]


@pytest.mark.parametrize("task", ["ppl", "passkey"])
def test_two_ranks_give_the_cells_of_one_process(task, tmp_path, tiny_llama_dir, corpus_file):
    single = run_task(task, tmp_path / "single.json", tiny_llama_dir, corpus_file, label=None)
    out = tmp_path / "ranks.json"
    result = torchrun(task, out, tiny_llama_dir, corpus_file)
    assert result.returncode == 0, result.stderr[-3000:]
    assert cells_without_place(load_run(out)) == cells_without_place(single)
    assert load_run(out).config["ranks"] == {"world_size": 2, "backend": "gloo"}
    assert result.stdout.count("tiny-llama0") == 1  # rank 0 alone prints the table
    assert result.stderr.count("loading tiny-llama0") == 1 and result.stderr.count("results written") == 1
    assert len(parts_of(tmp_path / "ranks.rank-0-of-2.journal.jsonl")) == (3 if task == "passkey" else 6)
    assert len(parts_of(tmp_path / "ranks.rank-1-of-2.journal.jsonl")) == (2 if task == "passkey" else 4)


def test_a_killed_rank_reruns_to_the_same_cells_recomputing_nothing(tmp_path, tiny_llama_dir, corpus_file):
    single = run_task("ppl", tmp_path / "single.json", tiny_llama_dir, corpus_file, label=None)
    out = tmp_path / "ranks.json"
    killed = torchrun("ppl", out, tiny_llama_dir, corpus_file, "kill", COCA_EVAL_TEST_KILL_RANK="1")
    assert killed.returncode != 0 and not out.exists()
    rank1 = tmp_path / "ranks.rank-1-of-2.journal.jsonl"
    first = parts_of(rank1)
    assert len(first) == 1  # killed right after its first part

    again = torchrun("ppl", out, tiny_llama_dir, corpus_file)
    assert again.returncode == 0, again.stderr[-3000:]
    assert cells_without_place(load_run(out)) == cells_without_place(single)
    for journal in (tmp_path / "ranks.rank-0-of-2.journal.jsonl", rank1):
        parts = parts_of(journal)
        assert len(parts) == len(set(parts))  # no part journaled twice: nothing was recomputed
    assert parts_of(rank1)[0] == first[0] and len(parts_of(rank1)) == 4


def test_an_out_of_memory_rank_makes_the_cell_oom_on_every_rank(tmp_path, tiny_llama_dir, corpus_file):
    out = tmp_path / "ranks.json"
    result = torchrun("ppl", out, tiny_llama_dir, corpus_file, "oom", COCA_EVAL_TEST_OOM_RANK="1")
    assert result.returncode == 0, result.stderr[-3000:]
    cells = load_run(out).cells
    assert [(c.length, c.status) for c in cells] == [(32, "ok"), (64, "oom")]
    assert cells[1].detail["error"].startswith("rank 1: CUDA out of memory")
