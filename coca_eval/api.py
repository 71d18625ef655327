"""The library entry points the CLI calls (and notebooks or other tools can call directly)."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coca_eval.backends.options import EngineOptions
from coca_eval.journal import Journal, cell_key
from coca_eval.methods import MethodSpec
from coca_eval.passkey.params import PasskeyParams
from coca_eval.ppl.params import PplParams
from coca_eval.progress import CellProgress
from coca_eval.results import Run, git_revision, save_run


def journal_path_for(output: Path | None, task: str, identity: dict) -> Path:
    """Next to ``--output`` when given; otherwise in the cache, keyed by the run's configuration."""
    if output is not None:
        return Path(output).with_suffix(".journal.jsonl")
    from coca_eval.assets import cache_dir

    base = Path(os.environ.get("COCA_EVAL_JOURNAL_DIR") or cache_dir() / "journals")
    return base / f"{task}-{cell_key(identity)[:16]}.journal.jsonl"


def _environment(device: str, **extra: Any) -> dict:
    import torch
    import transformers

    return {
        "device": device,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        **extra,
    }


@dataclass(frozen=True)
class Runtime:
    """Where and how models run; nothing here changes a number."""

    device: str = "cpu"
    device_map: str | None = None
    console: Any = None
    engine: EngineOptions = field(default_factory=EngineOptions)


def _run_task(
    name: str,
    make_task: Callable[[Journal, CellProgress], Any],
    methods: Sequence[MethodSpec],
    params: Any,
    output: Path | None,
    runtime: Runtime,
    **environment: Any,
) -> tuple[Run, Any]:
    """Shared by every task: fingerprints (fail fast), journal, progress, the cell loop, the run record."""
    from coca_eval.backends.options import check_backends, load_backend
    from coca_eval.models.presets import model_fingerprint, trained_context_of
    from coca_eval.models.rope import check_rope_patches
    from coca_eval.runner import run_cells

    weights = {m.model: model_fingerprint(m.model) for m in methods}  # fails fast on a missing model
    check_backends(methods, runtime.engine)
    check_rope_patches(methods)
    identity = {"methods": [m.identity() for m in methods], "weights": weights, "params": params.identity()}
    journal = Journal(journal_path_for(output, name, identity))
    longest = max(params.lengths) + getattr(params, "max_new_tokens", 0)
    backend_notes: dict[str, dict] = {}

    def load(method: MethodSpec):
        backend = load_backend(method, runtime.device, runtime.device_map, runtime.engine, longest)
        backend_notes[method.label] = dict(getattr(backend, "metadata", {}))
        return backend

    with CellProgress(len(methods) * len(params.lengths), runtime.console) as progress:
        task = make_task(journal, progress)
        cells = run_cells(task, methods, params.lengths, journal, load, lambda m: weights[m.model], progress)
    config = {
        "task": name,
        "params": params.identity(),
        "weights": weights,
        "journal": str(journal.path),
        "methods": [
            {"label": m.label, **m.identity(), "trained_context": trained_context_of(m.model)}
            for m in methods
        ],
        "environment": _environment(runtime.device, **environment),
    }
    if any(m.backend != "hf" for m in methods):
        config["engine"] = runtime.engine.describe()
    if any(backend_notes.values()):
        config["backends"] = {label: note for label, note in backend_notes.items() if note}
    return Run(git=git_revision(), config=config, cells=cells), task


def evaluate_ppl(
    methods: Sequence[MethodSpec],
    params: PplParams,
    output: Path | None = None,
    runtime: Runtime = Runtime(),
    batch_size: int = 1,
) -> Run:
    """Run (or resume) the perplexity task and return the typed run; writes ``output`` atomically."""
    from coca_eval.data.sources import check_source
    from coca_eval.ppl.task import PplTask

    check_source(params.dataset)
    make_task = lambda journal, progress: PplTask(params, journal, progress, batch_size)  # noqa: E731
    run, task = _run_task("ppl", make_task, methods, params, output, runtime, batch_size=batch_size)
    if task._documents is not None:  # provenance of the documents the cells average over
        used = {d["doc_id"] for c in run.cells for d in c.detail.get("docs", [])}
        run.config["documents"] = {d.doc_id: d.source for d in task.documents() if d.doc_id in used}
    if output is not None:
        save_run(run, Path(output))
    return run


def evaluate_passkey(
    methods: Sequence[MethodSpec],
    params: PasskeyParams,
    output: Path | None = None,
    runtime: Runtime = Runtime(),
    prefix_reuse: bool = True,
    dump_samples: Path | None = None,
) -> Run:
    """Run (or resume) passkey retrieval; ``dump_samples`` writes every sample with its prompt ids."""
    from coca_eval.passkey.task import PasskeyTask

    make_task = lambda journal, progress: PasskeyTask(params, journal, progress, prefix_reuse)  # noqa: E731
    run, _ = _run_task("passkey", make_task, methods, params, output, runtime, prefix_reuse=prefix_reuse)
    if dump_samples is not None:
        from coca_eval.passkey.dump import write_sample_dump

        write_sample_dump(run, methods, params, Path(dump_samples))
    if output is not None:
        save_run(run, Path(output))
    return run
