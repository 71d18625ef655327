"""torchrun data parallel: every rank computes its slice of each cell, and the parts meet at its end.

Launched by torchrun (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` in the environment), a task command
joins the process group (gloo on CPU; nccl on CUDA, each rank on the GPU of its ``LOCAL_RANK``) and
owns the units ``i % WORLD_SIZE == RANK``, journaled in its own journal (the rank is in the file
name). At the end of a cell every rank hands its parts, journaled before or just now, to every other
rank (``all_gather_object``) and forms the same cell with the task's ``combine``; rank 0 alone prints
and writes the results. Two more rules keep the ranks in step, since a collective that one rank skips
leaves the others waiting:

- a cell counts as finished only when every rank journaled it (a rank killed just before journaling
  it recomputes nothing, but its peers gather with it once more instead of skipping ahead);
- a rank that runs out of memory still joins the gather, with its failure, so the cell is ``oom``
  on every rank.

Before any of that, every rank gathers every rank's run identity (task, parameters, methods, weights,
data fingerprint) and refuses a mismatch in one line (:meth:`RankShare.agree`): ranks started with
another seed or other lengths would otherwise count a document twice or wait in a gather forever.
"""

from __future__ import annotations

import atexit
import json
import os
from dataclasses import dataclass
from typing import Any

from coca_eval.distributed.partial import merge_contexts
from coca_eval.distributed.partition import Partition, parse_shard
from coca_eval.distributed.share import WHOLE, Combine, ShardShare, Share, in_order
from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.results import Cell

TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


def launched_by_torchrun() -> bool:
    return all(name in os.environ for name in TORCHRUN_ENV)


class PeerOutOfMemory(MemoryError):
    """Another rank ran out of memory in this cell, so the cell is ``oom`` here too."""


@dataclass(frozen=True)
class Failure:
    """What a rank that failed a cell sends instead of its parts."""

    rank: int
    message: str


def all_gather(value: Any) -> list[Any]:
    """``value`` from every rank, in rank order (any picklable object)."""
    import torch.distributed as dist

    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, value)
    return gathered


@dataclass(frozen=True)
class RankShare(Share):
    """Rank ``partition.index`` of ``partition.count`` under torchrun."""

    backend: str = "gloo"

    @property
    def journal_tag(self) -> str:
        return f"rank-{self.partition.index}-of-{self.partition.count}"

    @property
    def leads(self) -> bool:
        return self.partition.index == 0

    def finished(self, journal: Journal, key: str) -> Cell | None:
        mine = journal.finished(key)
        return mine if all(all_gather(mine is not None)) else None

    def agree(self, identity: dict[str, Any]) -> None:
        """Every rank's run identity, compared with rank 0's on every rank: ranks started with another
        seed or other lengths would count documents twice or wait forever in a gather of a cell
        their peer never computes. Each rank refuses in the same one line."""
        from coca_eval.distributed.merge import differences

        plain = json.loads(json.dumps(identity, sort_keys=True, default=str))
        gathered = all_gather(plain)
        for rank, theirs in enumerate(gathered[1:], start=1):
            named = differences(gathered[0], theirs, sorted(set(gathered[0]) | set(theirs)))
            if named:
                raise CocaEvalError(
                    f"torchrun rank {rank} runs another run than rank 0: {', '.join(named)} differ; "
                    "start every rank with the same command, weights and data"
                )

    def cell(self, base: dict, parts: dict[int, dict], units: int, context: dict, combine: Combine) -> Cell:
        gathered = all_gather((parts, context))
        failed = [entry for entry in gathered if isinstance(entry, Failure)]
        if failed:
            raise PeerOutOfMemory(f"rank {failed[0].rank}: {failed[0].message}")
        every: dict[int, dict] = {}
        for theirs, _ in gathered:
            every.update(theirs)
        return combine(base, in_order(every, units), merge_contexts([c for _, c in gathered]))

    def abandon(self, exc: BaseException) -> None:
        if not isinstance(exc, PeerOutOfMemory):  # that rank already gathered (and learnt it failed)
            message = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            all_gather(Failure(self.partition.index, message))

    def config(self) -> dict[str, Any]:
        return {"ranks": {"world_size": self.partition.count, "backend": self.backend}}


def join_process_group(device: str) -> tuple[RankShare, str]:
    """Initialise torch.distributed from torchrun's environment (once) and say which rank we are."""
    import torch
    import torch.distributed as dist

    rank, world, local = (int(os.environ[name]) for name in TORCHRUN_ENV)
    on_cuda = device.startswith("cuda")
    if on_cuda:
        device = f"cuda:{local}"
        torch.cuda.set_device(local)
    backend = "nccl" if on_cuda else "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend)
        atexit.register(leave_process_group)
    return RankShare(Partition(rank, world), backend), device


def leave_process_group() -> None:
    """At exit, so torch does not warn about (or hang on) a group left open."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def share_for(shard: str | None, device: str) -> tuple[Share, str]:
    """This process's share: its rank when torchrun launched it, else ``--shard K/N``, else every unit.
    The device comes back too: a rank on CUDA runs on the GPU of its ``LOCAL_RANK``."""
    if launched_by_torchrun():
        if shard is not None:
            raise CocaEvalError("--shard splits a run between separate jobs; under torchrun the ranks "
                                "split it already: leave --shard out")  # fmt: skip
        return join_process_group(device)
    if shard is None:
        return WHOLE, device
    return ShardShare(parse_shard(shard)), device
