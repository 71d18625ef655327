"""Small protocols of ppl, passkey and an analysis on the tiny model, run whole or as one shard."""

from __future__ import annotations

from pathlib import Path

from coca_eval.api import Runtime, evaluate
from coca_eval.distributed.partition import Partition
from coca_eval.distributed.share import WHOLE, ShardShare
from coca_eval.methods import make_method
from coca_eval.results import Run

# five documents or samples: three shards own 2, 2 and 1 of them
PROTOCOLS = {
    "ppl": {"num_docs": 5, "doc_tokens": 128, "lengths": "32,64", "stride": 16},
    "passkey": {"samples": 5, "lengths": "200", "max_new_tokens": 4},
    "frequencies": {"num_docs": 5, "lengths": "48"},
}


def make_task_params(task: str, corpus: Path, **overrides):
    from coca_eval.taskspec import TASKS

    values = {**PROTOCOLS[task], **overrides}
    if task != "passkey":
        values["dataset"] = str(corpus)
    return TASKS.get(task).make_params(values)


def run_task(
    task: str,
    output: Path,
    model: Path,
    corpus: Path,
    shard: tuple[int, int] | None = None,
    label: str | None = "tiny",
    **overrides,
) -> Run:
    """One run in this process; ``label=None`` names the method as the command line does."""
    share = WHOLE if shard is None else ShardShare(Partition(*shard))
    method = make_method(str(model), "none", label, "float32", "hf")
    params = make_task_params(task, corpus, **overrides)
    return evaluate(task, [method], params, output, Runtime(share=share))


def cells_without_place(run: Run) -> list[dict]:
    return [cell.model_dump() for cell in run.cells]
