"""Options every model-evaluating command shares, and the helpers its commands call.

Choice lists come from the registries (backends, rope patches, dtypes), so a plug-in's backend is a
valid ``--backend`` without touching this file.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import click

from coca_eval.errors import CocaEvalError

ENGINE_KEYS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "distributed_executor_backend",
    "gpu_memory_utilization",
    "max_model_len",
    "enforce_eager",
    "base_urls",
    "max_concurrent",
    "api_key_env",
    "request_timeout",
)


class SampleCount(click.ParamType):
    """``--samples``: a whole number, or ``auto`` (sample in rounds until the stopping rule is met), or
    a task's own keywords (``helmet``: each task's count in HELMET's configs)."""

    name = "N|auto"

    def __init__(self, keywords: tuple[str, ...] = ()) -> None:
        self.keywords = ("auto", *keywords)
        self.name = "|".join(("N", *self.keywords))

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value in self.keywords:
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor {' nor '.join(self.keywords)}", param, ctx)


class BatchSize(click.ParamType):
    """``--batch-size``: rows decoded together, a whole number from 1, or ``auto`` (as many as fit)."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if value is None or value == "auto":
            return None
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is neither a whole number nor auto", param, ctx)
        if number < 1:
            self.fail(f"{number} rows cannot be decoded together; give 1 or more, or auto", param, ctx)
        return number


def with_options(command, options):
    """``command`` under each of ``options`` (click decorators), the first listed first in ``--help``."""
    for option in reversed(options):
        command = option(command)
    return command


def batch_size_option(command):
    """``--batch-size N|auto`` of a generation command (passed on as ``batch_size``; None is auto)."""
    return click.option(
        "--batch-size",
        "batch_size",
        type=BatchSize(),
        default="auto",
        show_default=True,
        help="Prompts decoded together on the hf backend (those of unequal lengths left-padded, in batches "
        "of similar lengths, where the model pads exactly); auto takes as many as half the free memory "
        "holds, at most 16 on a CPU and 64 on a GPU. Outputs are the same at every batch size.",
    )(command)


def dump_prompts_option(command):
    """``--dump-prompts DIR`` of a generation command (passed on as ``dump_prompts``)."""
    return click.option(
        "--dump-prompts",
        "dump_prompts",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Also write DIR/<task>.jsonl: one line per sample with the prompt the model saw (chat "
        "template rendered), its token count and its references. Changes nothing in the run.",
    )(command)


class RegistryChoice(click.Choice):
    """A choice list read from a registry each time it is shown or checked, so entries a plug-in
    registers later (or a test registers) are valid too."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self.registry.names())

    @choices.setter
    def choices(self, value: Any) -> None:  # click's __init__ assigns; the registry is the source
        pass


def _parallel_options() -> list:
    """vLLM's parallel sizes and executor: how the engine is laid over GPUs and nodes, never a number."""
    from coca_eval.backends.options import EXECUTORS

    return [
        click.option("--tensor-parallel-size", type=int, default=1, show_default=True, help="vllm: GPUs."),
        click.option(
            "--pipeline-parallel-size", type=int, default=1, show_default=True, help="vllm: pipeline stages."
        ),
        click.option(
            "--data-parallel-size", type=int, default=1, show_default=True, help="vllm: engine replicas."
        ),
        click.option(
            "--distributed-executor-backend",
            type=click.Choice(EXECUTORS),
            help="vllm: mp (one node) or ray (several nodes, after `ray start`).  [default: vLLM's choice]",
        ),
    ]


def _engine_options() -> list:
    """Backend choice and the engine options of the vllm and openai backends."""
    from coca_eval.backends.options import REQUEST_TIMEOUT_S
    from coca_eval.backends.registry import BACKENDS

    return [
        click.option(
            "--backend",
            type=RegistryChoice(BACKENDS),
            default="hf",
            show_default=True,
            help="Where the model runs: hf (transformers), vllm (in-process engine), openai (a running "
            "/v1/completions server), or a plug-in's backend.",
        ),
        click.option(
            "--base-url",
            "base_urls",
            multiple=True,
            help="openai backend: server URL, e.g. http://127.0.0.1:8000/v1; repeat it to spread the "
            "windows and samples over several servers serving the same model.",
        ),
        click.option(
            "--max-concurrent",
            type=int,
            default=4,
            show_default=True,
            help="openai backend: requests each server may have in flight at once.",
        ),
        click.option(
            "--request-timeout",
            type=float,
            default=REQUEST_TIMEOUT_S,
            show_default=True,
            help="openai backend: seconds a request may go unanswered before it is retried (a hung "
            "server is named while it is waited for).",
        ),
        click.option(
            "--api-key-env",
            metavar="NAME",
            help="openai backend: environment variable holding the API key, sent as a Bearer token and "
            "never recorded.  [default: OPENAI_API_KEY]",
        ),
        *_parallel_options(),
        click.option("--gpu-memory-utilization", type=float, help="vllm: fraction of GPU memory to use."),
        click.option("--max-model-len", type=int, help="vllm: context the engine reserves (default: task)."),
        click.option(
            "--enforce-eager/--no-enforce-eager", default=None, help="vllm: skip CUDA graphs / compilation."
        ),
    ]


WAIT_OPTION = click.option(
    "--wait",
    is_flag=True,
    help="If another run is using this run's journal (the same --output), wait for it to finish and "
    "reuse its cells instead of stopping.",
)


REUSE_OPTION = click.option(
    "--reuse",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Another run's results file or journal (repeatable): its finished cells with this run's keys "
    "(same model, weights, patch, protocol, length; any label) are copied in, not computed again.",
)


SHARD_OPTION = click.option(
    "--shard",
    metavar="K/N",
    help="Compute only shard K of N (1-based) of every cell's documents or samples, e.g. one array task "
    "of a batch scheduler; the output holds partial cells for `coca-eval merge`.",
)


def method_options(
    output_help: str, batch_help: str | None = None, journaled: bool = False, splits: bool = False
):
    """Options shared by every task that evaluates methods (model x rope patch x backend).

    The engine options reach the command as one ``engine`` argument (an ``EngineOptions``). A task
    without batching leaves ``batch_help`` out and has no ``--batch-size``; a task that keeps a journal
    (``journaled``) has ``--wait``, since only a journal is locked against a second run, and ``--reuse``,
    since only journaled cells carry the keys that match them; a task whose cells can be split over
    processes (``splits``) has ``--shard``.
    """
    from coca_eval.methods import DTYPES
    from coca_eval.models.rope import rope_choices

    options = [
        click.option(
            "--model",
            "models",
            multiple=True,
            help="Model preset (see `coca-eval models`), local directory or hub id (repeatable). "
            "Default: the preset's rows (the default preset's showcase), else smollm2-135m.",
        ),
        click.option(
            "--rope", "ropes", multiple=True, help=f"Position patch (repeatable): {rope_choices()}."
        ),
        click.option(
            "--methods",
            "methods_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="YAML file with a 'methods:' list of {model, rope, label, dtype, backend}.",
        ),
        click.option("--dtype", type=click.Choice(DTYPES), default="float32", show_default=True),
        click.option("--device", default="cpu", show_default=True, help="cpu | cuda | cuda:N."),
        click.option("--device-map", default=None, help="transformers device_map (e.g. auto) for multi-GPU."),
        click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help=output_help),
        click.option(
            "--force",
            is_flag=True,
            help="Overwrite an --output that holds another task's, protocol's or methods' run.",
        ),
        *_engine_options(),
    ]
    if batch_help is not None:
        options.append(click.option("--batch-size", default=1, show_default=True, type=int, help=batch_help))
    if journaled:
        options += [WAIT_OPTION, REUSE_OPTION]
    if splits:
        options.append(SHARD_OPTION)

    def decorate(func):
        @functools.wraps(func)
        def wrapper(**kwargs):
            from coca_eval.backends.options import EngineOptions

            kwargs["engine"] = EngineOptions(**{key: kwargs.pop(key) for key in ENGINE_KEYS})
            return func(**kwargs)

        return with_options(wrapper, options)

    return decorate


def make_runtime(
    device: str, device_map, engine, force: bool, wait: bool = False, shard: str | None = None, reuse=()
):
    """The run's :class:`~coca_eval.api.Runtime`: this process's share of the units (``--shard K/N``,
    or its rank when torchrun launched it) and the console, silent on every rank but 0."""
    from coca_eval.api import Runtime
    from coca_eval.cli.output import stderr, stdout
    from coca_eval.distributed.torchrun import share_for

    share, device = share_for(shard, device)
    if not share.leads:
        stdout().quiet = stderr().quiet = True
    return Runtime(device, device_map, stderr(), engine, force, wait, share, tuple(reuse))


def build_cli_methods(models, ropes, methods_file, dtype, backend="hf", preset=None, task=None) -> list:
    """The rows to run: ``--model`` x ``--rope`` and ``--methods``; else the preset's rows; else SmolLM2."""
    from coca_eval.methods import build_methods
    from coca_eval.presets import get_preset

    rows = get_preset(preset, task=task).methods if preset and not (models or methods_file) else ()
    chosen = list(models) or ([] if methods_file or rows else ["smollm2-135m"])
    return build_methods(chosen, list(ropes), methods_file, dtype, backend, rows)


def check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise CocaEvalError(f"--batch-size must be a positive integer (got {batch_size})")
