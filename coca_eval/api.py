"""The library entry points the CLI calls (and notebooks or other tools can call directly)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coca_eval.backends.options import EngineOptions
from coca_eval.distributed.share import WHOLE, Share
from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal, cell_key, exclusive_lock, release_lock
from coca_eval.lengths import check_shortest
from coca_eval.methods import MethodSpec
from coca_eval.progress import CellProgress
from coca_eval.provenance import code_provenance
from coca_eval.results import Run, check_overwrite
from coca_eval.run_config import run_config
from coca_eval.taskspec import TASKS, TaskSpec, save_run_in_points


def journal_path_for(output: Path | None, task: str, identity: dict, tag: str | None = None) -> Path:
    """Next to ``--output`` when given; otherwise in the cache, keyed by the run's configuration.

    ``tag`` names a shard or a rank (``shard-2-of-8``): each has its own journal, so shards on a shared
    filesystem and ranks of one torchrun never append to, or lock, one another's.
    """
    if output is not None:
        return _journal_beside(Path(output), tag)
    from coca_eval.assets import cache_dir

    base = Path(os.environ.get("COCA_EVAL_JOURNAL_DIR") or cache_dir() / "journals")
    key = cell_key({**identity, "share": tag} if tag else identity)[:16]
    return base / f"{task}-{key}{f'.{tag}' if tag else ''}.journal.jsonl"


def _journal_beside(output: Path, tag: str | None) -> Path:
    """``run.json`` (or ``run.json.gz``) keeps ``run.journal.jsonl`` beside it, and its shard 1 of 6
    ``run.shard-1-of-6.journal.jsonl``.

    An output already named for its shard (``run.shard-1-of-6.json``) names its journal with the tag
    once. Earlier versions wrote the tag twice there (``run.shard-1-of-6.shard-1-of-6.journal.jsonl``);
    such a journal, when it is the only one, is still the one used, so its run keeps resuming.
    """
    if output.name.endswith(".json.gz"):
        output = output.with_name(output.name[: -len(".gz")])
    if not tag:
        return output.with_suffix(".journal.jsonl")
    tagged = output.with_suffix(f".{tag}.journal.jsonl")
    if not output.stem.endswith(f".{tag}"):
        return tagged
    once = output.with_suffix(".journal.jsonl")
    return tagged if tagged.exists() and not once.exists() else once


@dataclass(frozen=True)
class Runtime:
    """Where and how models run; nothing here changes a number."""

    device: str = "cpu"
    device_map: str | None = None
    console: Any = None
    engine: EngineOptions = field(default_factory=EngineOptions)
    force: bool = False  # replace an output that holds another task's, protocol's or methods' run
    wait: bool = False  # wait for a run holding the same journal instead of refusing
    share: Share = WHOLE  # this process's units: all, a --shard's slice, or a torchrun rank's
    reuse: tuple[Path, ...] = ()  # other runs whose finished cells of the same key are taken, not redone


def evaluate(
    task: str | TaskSpec,
    methods: Sequence[MethodSpec],
    params: Any,
    output: Path | None = None,
    runtime: Runtime = Runtime(),
    **options: Any,
) -> Run:
    """Run (or resume) any registered task and return the typed run; writes ``output`` atomically.

    ``params`` comes from the spec's ``make_params`` (it has ``lengths`` and ``identity()``);
    ``options`` reach the task's runner and its ``finish`` hook. They change no number (batch size,
    prefix reuse, a sample dump), except a generation run's ``thinking``, which the runner puts in
    its cells' keys and records in its cells. The shared part: fingerprints (fail fast), journal,
    progress, the cell loop, the run record.
    """
    from coca_eval.backends.options import check_backends, check_device, check_lengths
    from coca_eval.models.rope import check_rope_patches

    spec = TASKS.get(task) if isinstance(task, str) else task
    if spec.make_runner is None:
        raise CocaEvalError(f"task {spec.name!r} runs through its own command (coca-eval {spec.name})")
    if spec.shortest is not None:
        check_shortest(params.lengths, spec.name, *spec.shortest(params))
    if options.get("dump_prompts") is not None:
        from coca_eval.generation.dump import check_dump_folder

        check_dump_folder(Path(options["dump_prompts"]))
    if spec.check is not None:
        spec.check(params, methods)
    if not runtime.share.whole and spec.combine is None:
        raise CocaEvalError(f"task {spec.name!r} cannot be split over processes (its spec has no combine)")
    check_overwrite(
        output, spec.name, params.identity(), runtime.force, runtime.share.config(), rows(methods)
    )
    check_device(runtime.device, methods)
    weights = weights_fingerprints(methods)  # fails fast on a missing model
    check_backends(methods, runtime.engine)
    check_lengths(methods, runtime.engine, sequence_need(params))
    if options.get("batch_size") is not None and hasattr(params, "longest_sequence"):  # rows decoded together
        from coca_eval.backends.batch_size import check_batch_size

        need = sequence_need(params)
        check_batch_size(methods, runtime.device, need.prompt, need.new_tokens, options["batch_size"])
    check_rope_patches(methods)
    identity = {"methods": [m.identity() for m in methods], "weights": weights, "params": params.identity()}
    data = data_of(params)
    runtime.share.agree({"task": spec.name, "task_version": spec.version, **identity, "data": data})
    path = journal_path_for(output, spec.name, identity, runtime.share.journal_tag)
    journal = Journal(path, runtime.wait, _say(runtime.console))  # one run per journal
    with journal, _output_lock(output, spec.name, params, runtime, methods):
        return _run_locked(spec, methods, params, output, runtime, journal, weights, options, data)


def rows(methods: Sequence[MethodSpec]) -> list[dict[str, Any]]:
    """The methods as a results file names them (its ``config.methods``, less what only describes)."""
    return [{"label": m.label, **m.identity()} for m in methods]


def sequence_need(params: Any):
    """The run's longest prompt and longest sequence (prompt plus new tokens): a task that generates
    says the latter (``longest_sequence``), one that only scores needs its longest window."""
    from coca_eval.backends.registry import SequenceNeed

    prompt = max(params.lengths)
    return SequenceNeed(prompt, getattr(params, "longest_sequence", lambda: prompt)())


def weights_fingerprints(methods: Sequence[Any]) -> dict[str, str]:
    """Each model's fingerprint (journal keys and the run record carry it). A model that only backends
    without weights use is not looked up: a plug-in's ``some/model`` is no hub id to resolve."""
    from coca_eval.backends.registry import BACKENDS
    from coca_eval.models.presets import model_fingerprint

    weights: dict[str, str] = {}
    for method in methods:
        if BACKENDS.get(method.backend).needs_weights:
            weights[method.model] = model_fingerprint(method.model)
        else:
            weights.setdefault(method.model, f"no weights (backend {method.backend})")
    return weights


@contextmanager
def _output_lock(output: Path | None, task: str, params: Any, runtime: Runtime, methods) -> Iterator[None]:
    """One writer per ``--output``. A plain run holds it already: its journal lock is the output's
    (``<output>.journal.jsonl.lock``). A shard writes its own journal, so it takes that lock as well,
    or two shards given one ``--output`` would both print "written" and the last would win."""
    if output is None or runtime.share.whole or not runtime.share.leads:
        yield
        return
    plain = journal_path_for(output, task, {})
    if plain == journal_path_for(output, task, {}, runtime.share.journal_tag):
        yield  # an output named for its shard: the shard's journal lock is the output's already
        return
    lock = plain.with_name(plain.name + ".lock")
    fd = exclusive_lock(lock, f"output {output}", "being written", runtime.wait, _say(runtime.console))
    try:  # a run waited for may have written its own results there meanwhile
        check_overwrite(output, task, params.identity(), runtime.force, runtime.share.config(), rows(methods))
        yield
    finally:
        release_lock(fd)


def data_of(params: Any) -> str | None:
    """The fingerprint of the documents a task reads (None for a task that generates its inputs)."""
    from coca_eval.data.sources import data_fingerprint

    dataset = getattr(params, "dataset", None)
    return data_fingerprint(dataset) if isinstance(dataset, str) else None


def _run_locked(spec, methods, params, output, runtime, journal, weights, options, data=None) -> Run:
    """The body of :func:`evaluate` while it holds the journal's lock (the output is written under it,
    so a second run cannot interleave its cells or results with ours)."""
    from coca_eval.backends.options import load_backend
    from coca_eval.runner import cell_count, run_cells

    for warning in journal.warnings:
        if runtime.console is not None:
            runtime.console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    longest = sequence_need(params).total
    backend_notes: dict[str, dict] = {}

    def load(method: MethodSpec):
        backend = load_backend(method, runtime.device, runtime.device_map, runtime.engine, longest)
        backend_notes[method.label] = dict(getattr(backend, "metadata", {}))
        return backend

    split = {} if runtime.share.whole else {"share": runtime.share}  # a task that cannot split never sees it
    with CellProgress(len(methods) * len(params.lengths), runtime.console) as progress:
        runner = spec.make_runner(params, journal, progress, **split, **options)
        progress.set_total(cell_count(runner, methods, params.lengths))
        if runtime.reuse:
            _adopt(runner, methods, params, journal, weights, runtime)
        cells = run_cells(
            runner, methods, params.lengths, journal, load, lambda m: weights[m.model], progress,
            runtime.share, spec.contradiction,
        )  # fmt: skip
    config = run_config(spec, methods, params, journal, weights, runtime, options, backend_notes)
    if data is not None:
        config["data"] = data  # what merge checks shards against
    dtypes = {m.label: m.dtype for m in methods}
    cells = [c.model_copy(update={"device": runtime.device, "dtype": dtypes.get(c.method)}) for c in cells]
    run = Run(**code_provenance(), config=config, cells=cells)
    if not runtime.share.leads:  # a torchrun rank other than 0: rank 0 writes what all formed
        return run
    if spec.finish is not None:
        spec.finish(run, runner, methods, params, **options)
    if output is not None:
        save_run_in_points(run, Path(output))
    if options.get("dump_prompts") is not None:  # a generation task's --dump-prompts, once the run is safe
        runner.dump_prompts(run, methods, Path(options["dump_prompts"]))
    return run


def _adopt(runner, methods, params, journal, weights, runtime: Runtime) -> None:
    """Take the ``--reuse`` runs' finished cells of this run's keys into its journal (see
    :mod:`coca_eval.reuse`), before any model is loaded for them."""
    from coca_eval.reuse import adopt
    from coca_eval.runner import cell_slots

    slots = list(cell_slots(runner, params.lengths))
    keys = [runner.cell_key(m, weights[m.model], n, **extra) for m in methods for n, extra in slots]
    adopted = adopt(journal, runtime.reuse, keys, runtime.share.whole)
    if runtime.console is not None:
        line = adopted.describe(runtime.reuse)
        runtime.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _say(console: Any):
    """A one-line notice on the run's console (none without one)."""
    if console is None:
        return None
    return lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)


def evaluate_ppl(
    methods: Sequence[MethodSpec],
    params: Any,
    output: Path | None = None,
    runtime: Runtime = Runtime(),
    batch_size: int = 1,
) -> Run:
    """:func:`evaluate` for the perplexity task (a convenience for notebooks)."""
    return evaluate("ppl", methods, params, output, runtime, batch_size=batch_size)


def evaluate_passkey(
    methods: Sequence[MethodSpec],
    params: Any,
    output: Path | None = None,
    runtime: Runtime = Runtime(),
    prefix_reuse: bool = True,
    dump_samples: Path | None = None,
) -> Run:
    """:func:`evaluate` for passkey retrieval; ``dump_samples`` writes every sample with its prompt ids."""
    return evaluate("passkey", methods, params, output, runtime, prefix_reuse=prefix_reuse,
                    dump_samples=dump_samples)  # fmt: skip
