"""The loop every task shares: methods x lengths, journal reuse, lazy model loading, OOM cells.

A task supplies three things (:class:`CellTask`): the key of a cell, what to prepare once per loaded
model (documents, prompt builders), and how to evaluate one cell. The runner loads a model only when
one of its cells is not already in the journal, and turns an out-of-memory failure into an ``oom``
cell so the run goes on.

A task whose cells also vary by dataset (a suite of sub-tasks, each with its own table row) declares
them in ``datasets``; the runner then goes over datasets x lengths for every method and hands each cell's
dataset to ``cell_key`` and ``evaluate`` as the keyword ``dataset``. A task without ``datasets`` is
called exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from coca_eval.backends.base import is_out_of_memory
from coca_eval.distributed.share import WHOLE, Share
from coca_eval.errors import NonFiniteOutput
from coca_eval.journal import Journal
from coca_eval.methods import MethodSpec
from coca_eval.progress import CellProgress
from coca_eval.results import Cell, Status


class CellTask(Protocol):
    name: str
    metric: str
    dataset: str | None

    def cell_key(self, method: MethodSpec, weights: str, length: int) -> str: ...

    def prepare(self, method: MethodSpec, backend: Any) -> Any:
        """Per-model state reused by every length (e.g. sampled documents)."""
        ...

    def evaluate(self, method: MethodSpec, backend: Any, state: Any, length: int, key: str) -> Cell: ...


def task_datasets(task: Any) -> tuple[str, ...]:
    """The datasets a task's cells vary over (empty: one cell per method and length)."""
    return tuple(getattr(task, "datasets", None) or ())


def cell_slots(task: Any, lengths: Sequence[int]) -> Iterator[tuple[int, dict[str, str]]]:
    """Every (length, keyword arguments) of one method's cells, datasets outermost: the extra keyword
    ``dataset`` goes to ``cell_key`` and ``evaluate`` only for a task that declares ``datasets``."""
    datasets = task_datasets(task)
    for dataset in datasets or (None,):
        for length in lengths:
            yield length, ({"dataset": dataset} if datasets else {})


def cell_count(task: Any, methods: Sequence[Any], lengths: Sequence[int]) -> int:
    """How many cells a run of ``task`` has (for the progress bar)."""
    return len(methods) * len(lengths) * max(1, len(task_datasets(task)))


def failed_cell(
    task: CellTask,
    method: MethodSpec,
    length: int,
    exc: BaseException,
    dataset: str | None = None,
    status: Status = "oom",
) -> Cell:
    """A cell that could not be computed (``oom``, or ``error`` for a non-finite output), saying why; a
    non-finite output's cell keeps the samples answered beside the failed one (``exc.samples``)."""
    detail: dict[str, Any] = {"error": str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}
    if getattr(exc, "samples", None):
        detail["samples"] = list(exc.samples)
    return Cell(
        task=task.name,
        method=method.label,
        metric=task.metric,
        length=length,
        dataset=dataset if dataset is not None else task.dataset,
        status=status,
        detail=detail,
    )


def _free_cuda_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_cells(
    task: CellTask,
    methods: Sequence[MethodSpec],
    lengths: Sequence[int],
    journal: Journal,
    load_backend: Callable[[MethodSpec], Any],
    weights_of: Callable[[MethodSpec], str],
    progress: CellProgress,
    share: Share = WHOLE,
    contradiction: Callable[[Cell], str | None] | None = None,
) -> list[Cell]:
    """Every (method, [dataset,] length) cell, from the journal when finished there, else computed and
    journaled. A journaled cell that ``contradiction`` finds at odds with its own records (a forged or
    corrupted line) is computed again, never taken.

    ``share`` says which units this process computes and how its parts become a cell (see
    :mod:`coca_eval.distributed`); the plain run computes all of them here.
    """
    cells = []
    for method in methods:
        slots = [(n, extra, task.cell_key(method, weights_of(method), n, **extra)) for n, extra in
                 cell_slots(task, lengths)]  # fmt: skip
        backend = state = None
        for length, extra, key in slots:
            cell = share.finished(journal, key)
            if cell is not None and contradiction is not None and (why := contradiction(cell)):
                progress.log(f"journaled cell {cell.method} @ {cell.length} computed again: {why}")
                cell = None
            if cell is None:
                if backend is None:
                    progress.log(f"loading {method.label} ...")
                    backend = load_backend(method)
                    state = task.prepare(method, backend)
                try:
                    cell = task.evaluate(method, backend, state, length, key, **extra)
                    progress.finish_cell()
                except NonFiniteOutput as exc:
                    share.abandon(exc)
                    progress.finish_cell("[red]error")
                    cell = failed_cell(task, method, length, exc, extra.get("dataset"), "error")
                except Exception as exc:
                    if not is_out_of_memory(exc):
                        raise
                    share.abandon(exc)  # processes gathering this cell's parts learn it failed
                    _free_cuda_memory()
                    progress.finish_cell("[red]OOM")
                    cell = failed_cell(task, method, length, exc, extra.get("dataset"))
                journal.record_cell(key, cell)
            else:
                progress.journaled_cell()
            cells.append(cell.model_copy(update={"method": method.label}))
        if backend is not None and hasattr(backend, "close"):
            backend.close()  # engines (vLLM) hold memory until told otherwise
    return cells
