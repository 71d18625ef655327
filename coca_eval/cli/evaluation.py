"""The end every journaled evaluating command shares: build the rows and the runtime, evaluate, and,
on the process that writes, save the run.

``ppl`` (and its ``--metric longppl``), ``passkey`` and ``ruler`` differ in their parameters and in what
they print; how the rows are chosen, how the run is launched and where it is saved is one rule, stated
here once so that a change to it reaches every command alike.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coca_eval.backends.options import EngineOptions
    from coca_eval.results import Run


@dataclass(frozen=True)
class MethodOptions:
    """The values :func:`~coca_eval.cli.options.method_options` gives a journaled, splittable command,
    as one value: which rows (``--model``, ``--rope``, ``--methods``, ``--dtype``, ``--backend``), where
    and how they run (``--device``, ``--device-map``, the engine options, ``--wait``, ``--shard``,
    ``--reuse``) and where the results go (``--output``, ``--force``). A command hands it on whole
    instead of a dozen arguments that every command would otherwise spell out again."""

    models: tuple[str, ...]
    ropes: tuple[str, ...]
    methods_file: Path | None
    dtype: str
    backend: str
    device: str
    device_map: str | None
    engine: EngineOptions
    output: Path | None
    force: bool
    wait: bool
    shard: str | None
    reuse: tuple[Path, ...]

    @classmethod
    def take(cls, options: dict[str, Any]) -> MethodOptions:
        """Pop these values out of a command's keyword arguments, leaving the task's own behind (the
        preset-valued overrides, which the command lays over its preset)."""
        return cls(**{field.name: options.pop(field.name) for field in fields(cls)})


def evaluate_and_save(
    task: str, params: Any, chosen: MethodOptions, preset: str, preset_task: str | None = None, **task_options
) -> tuple[Run, Path] | None:
    """Evaluate ``task`` with ``params`` on the rows ``chosen`` names (the preset's rows when it names
    none) and return the run with the file it was saved to (``--output``, else ``runs/<task>-*.json``).

    None on a torchrun rank other than 0: rank 0 alone writes and prints. ``preset_task`` is the task
    the preset belongs to where that is not the task evaluated (``ppl --metric longppl`` runs a ppl
    preset's rows); ``task_options`` go to :func:`coca_eval.api.evaluate` as they are.
    """
    from coca_eval.api import evaluate
    from coca_eval.cli.options import build_cli_methods, make_runtime
    from coca_eval.cli.output import save_default

    rows = (chosen.models, chosen.ropes, chosen.methods_file, chosen.dtype, chosen.backend)
    methods = build_cli_methods(*rows, preset, preset_task or task)
    runtime = make_runtime(
        chosen.device, chosen.device_map, chosen.engine, chosen.force, chosen.wait, chosen.shard, chosen.reuse
    )
    run = evaluate(task, methods, params, chosen.output, runtime, **task_options)
    if not runtime.share.leads:
        return None
    return run, save_default(run, chosen.output, task)
