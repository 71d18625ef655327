"""The ``coca-eval`` command: parse options, call :mod:`coca_eval.api`, render with rich.

No evaluation logic lives here. Every user-facing problem is one line on stderr and exit code 2.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click
from rich.console import Console

from coca_eval import __version__
from coca_eval.errors import CocaEvalError

stdout = Console()
stderr = Console(stderr=True)

PPL_PRESET_KEYS = (
    "dataset",
    "num_docs",
    "doc_tokens",
    "lengths",
    "stride",
    "mode",
    "bos",
    "seed",
    "limit",
    "text_field",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="coca-eval")
def cli() -> None:
    """Long-context evaluation: sliding-window perplexity (and more) for CoCA and RoPE-scaled models.

    \b
    coca-eval ppl --stride 512                    # embedded books, SmolLM2-135M, 512..2k
    coca-eval ppl --preset pg19 --model DIR --rope none --rope dynamic:4
    coca-eval tasks | coca-eval models
    """


ENGINE_KEYS = ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "enforce_eager", "base_url")


def _engine_options():
    """Backend choice and the engine options of the vllm and openai backends."""
    return [
        click.option(
            "--backend",
            type=click.Choice(["hf", "vllm", "openai"]),
            default="hf",
            show_default=True,
            help="hf (transformers), vllm (in-process engine) or openai (a running /v1/completions server).",
        ),
        click.option("--base-url", help="openai backend: server URL, e.g. http://127.0.0.1:8000/v1."),
        click.option("--tensor-parallel-size", type=int, default=1, show_default=True, help="vllm: GPUs."),
        click.option("--gpu-memory-utilization", type=float, help="vllm: fraction of GPU memory to use."),
        click.option("--max-model-len", type=int, help="vllm: context the engine reserves (default: task)."),
        click.option(
            "--enforce-eager/--no-enforce-eager", default=None, help="vllm: skip CUDA graphs / compilation."
        ),
    ]


def method_options(func):
    """Options shared by every task that evaluates methods (model x rope patch x backend).

    The engine options reach the command as one ``engine`` argument (an ``EngineOptions``).
    """
    options = [
        click.option(
            "--model",
            "models",
            multiple=True,
            help="Model preset, local directory or hub id (repeatable). Default: smollm2-135m.",
        ),
        click.option(
            "--rope",
            "ropes",
            multiple=True,
            help="Position patch: none, linear:F, dynamic:F, ntk:F, yarn:F, base:THETA (repeatable).",
        ),
        click.option(
            "--methods",
            "methods_file",
            type=click.Path(dir_okay=False, path_type=Path),
            help="YAML file with a 'methods:' list of {model, rope, label, dtype, backend}.",
        ),
        click.option("--dtype", default="float32", show_default=True, help="float32 | bfloat16 | float16."),
        click.option("--device", default="cpu", show_default=True, help="cpu | cuda | cuda:N."),
        click.option("--device-map", default=None, help="transformers device_map (e.g. auto) for multi-GPU."),
        click.option(
            "--batch-size", default=1, show_default=True, type=int, help="Windows per forward pass."
        ),
        click.option(
            "--output",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write the results JSON here (its journal, or OpenCompass's work directory, beside it: "
            "rerun the same command to resume).",
        ),
        *_engine_options(),
    ]

    @functools.wraps(func)
    def wrapper(**kwargs):
        from coca_eval.backends.options import EngineOptions

        kwargs["engine"] = EngineOptions(**{key: kwargs.pop(key) for key in ENGINE_KEYS})
        return func(**kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _preset_values(preset: str, task: str, overrides: dict) -> dict:
    """The preset's parameters with every option the user actually gave laid over them."""
    from coca_eval.presets import get_preset

    values = dict(get_preset(preset, task=task).params)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return values


def _methods(models, ropes, methods_file, dtype, batch_size=1, backend="hf"):
    from coca_eval.methods import build_methods

    if batch_size < 1:
        raise CocaEvalError(f"--batch-size must be a positive integer (got {batch_size})")
    return build_methods(
        list(models) or ([] if methods_file else ["smollm2-135m"]), list(ropes), methods_file, dtype, backend
    )


def _print_table(run, heading: str, digits: int, output) -> None:
    from coca_eval.tables import methods_by_lengths, rich_table

    stdout.print(heading)
    stdout.print(rich_table(methods_by_lengths(run.cells, digits), title=""))
    if output is not None:
        stderr.print(f"results written to {output}")


@cli.command()
@click.option("--preset", default="embedded", show_default=True, help="Task preset (see `coca-eval tasks`).")
@click.option(
    "--dataset", help="embedded | pg19 | hf:ID[:SPLIT] | path to .txt/.jsonl/.parquet or a directory."
)
@click.option("--num-docs", type=int, help="Documents to sample (each must have >= --doc-tokens tokens).")
@click.option("--doc-tokens", type=int, help="Tokens kept per document.")
@click.option("--lengths", help="Window lengths: 512..32k (powers of two), 512,1024,4096 or 1k..8k.")
@click.option("--stride", type=int, help="Sliding stride S; S >= L means disjoint windows.")
@click.option("--mode", type=click.Choice(["sliding", "truncated"]), help="truncated: first L tokens only.")
@click.option("--bos", type=click.Choice(["auto", "always", "never", "first"]), help="BOS per window.")
@click.option("--seed", type=int, help="Document sampling seed.")
@click.option("--limit", type=int, help="Evaluate only the first N sampled documents (quick checks).")
@click.option("--text-field", help="Text field of .jsonl/.parquet/hub rows.")
@method_options
def ppl(
    preset,
    models,
    ropes,
    methods_file,
    dtype,
    device,
    device_map,
    batch_size,
    output,
    backend,
    engine,
    **overrides,
):
    """Sliding-window perplexity: one methods x lengths table (the paper's Table 1)."""
    from coca_eval.api import Runtime, evaluate_ppl
    from coca_eval.ppl.params import make_params

    params = make_params(_preset_values(preset, "ppl", overrides))
    methods = _methods(models, ropes, methods_file, dtype, batch_size, backend)
    run = evaluate_ppl(methods, params, output, Runtime(device, device_map, stderr, engine), batch_size)
    docs = max(len(c.detail.get("docs", [])) for c in run.cells)
    heading = (
        f"[bold]Perplexity[/bold], {params.dataset}: {docs} docs x {params.doc_tokens} tokens, "
        f"{params.mode}, S={params.stride}, BOS {params.bos}"
    )
    _print_table(run, heading, 2, output)


@cli.command()
@click.option(
    "--preset", default="passkey-quick", show_default=True, help="Task preset (see `coca-eval tasks`)."
)
@click.option("--lengths", help="Prompt lengths in tokens: 512..32k, 512,1024 or 1k..8k.")
@click.option("--samples", type=int, help="Samples per length (the paper uses 100).")
@click.option("--seed", type=int, help="Seed of keys and depths (same samples for every method).")
@click.option("--max-new-tokens", type=int, help="Greedy tokens at most (paper: 64); stops once decided.")
@click.option("--depths", help="stratified | random | comma list of fractions, e.g. 0,0.25,0.5,0.75,1.")
@click.option("--template", type=click.Choice(["landmark", "coca"]), help="Prompt wording.")
@click.option(
    "--dump-samples",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every sample (prompt ids, key, depth, distance, output, correct) as JSONL.",
)
@click.option(
    "--no-prefix-reuse", is_flag=True, help="Decode every sample from scratch (slower, same outputs)."
)
@method_options
def passkey(
    preset,
    models,
    ropes,
    methods_file,
    dtype,
    device,
    device_map,
    batch_size,
    output,
    backend,
    engine,
    dump_samples,
    no_prefix_reuse,
    **overrides,
):
    """Passkey retrieval at exact token lengths: accuracy per methods x lengths (the paper's Table 2)."""
    from coca_eval.api import Runtime, evaluate_passkey
    from coca_eval.passkey.params import make_passkey_params

    params = make_passkey_params(_preset_values(preset, "passkey", overrides))
    methods = _methods(models, ropes, methods_file, dtype, batch_size, backend)
    runtime = Runtime(device, device_map, stderr, engine)
    run = evaluate_passkey(methods, params, output, runtime, not no_prefix_reuse, dump_samples)
    heading = (
        f"[bold]Passkey accuracy[/bold], {params.samples} samples per length, template {params.template}, "
        f"greedy <= {params.max_new_tokens} tokens"
    )
    _print_table(run, heading, 2, output)


@cli.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("output", type=click.Path(path_type=Path))
@click.option(
    "--from-llama",
    is_flag=True,
    help="SOURCE is a plain LLaMA checkpoint: start CoCA from it "
    "(t_proj initialised from k_proj), ready for the paper's fine-tuning recipe.",
)
@click.option("--variant", type=click.Choice(["slack", "strict"]), default="slack", show_default=True)
def convert(source: Path, output: Path, from_llama: bool, variant: str) -> None:
    """Write a coca-eval CoCA checkpoint from a reference-repository CoCA checkpoint (LLaMA-CoCA with
    t_proj, or NeoX-CoCA with fused q/t/v) or, with --from-llama, from a plain LLaMA checkpoint."""
    from coca_eval.models.convert import convert_from_llama, convert_reference

    written = (convert_from_llama if from_llama else convert_reference)(source, output, variant)
    stderr.print(f"CoCA ({variant}) checkpoint written to {written}; evaluate it with --model {written}")


class _RunByDefault(click.Group):
    """``coca-eval opencompass --model ...`` means ``coca-eval opencompass run --model ...``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_RunByDefault)
def opencompass() -> None:
    """Short-context benchmarks through OpenCompass (the paper's Table 5).

    \b
    coca-eval opencompass --model DIR --rope none --datasets table5 --data-root ~/oc-data --output t5.json
    coca-eval opencompass --model DIR --datasets COPA,RTE,MMLU:anatomy --data-root ~/oc-data
    coca-eval opencompass import outputs/default/2026.../summary/summary_2026....csv --output t5.json
    """


def _print_table5(run, output) -> None:
    from coca_eval.opencompass.report import opencompass_tables
    from coca_eval.report.definition import ReportDefinition
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    for table in opencompass_tables(run.cells, ReportDefinition()):
        stdout.print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
    if output is not None:
        stderr.print(f"results written to {output}")


@opencompass.command("run")
@click.option(
    "--datasets",
    default="table5",
    show_default=True,
    help="table5, or names: COPA,RTE,BoolQ,MMLU:anatomy,...",
)
@click.option(
    "--data-root",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory holding OpenCompass's data/ tree (data/SuperGLUE/COPA/val.jsonl, ...).",
)
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path),
    help="Config, logs and outputs; finished tasks are reused on a rerun with the same methods and "
    "settings (default: OUTPUT.opencompass beside --output, else a new temp dir).",
)
@click.option(
    "--max-seq-len", default=2048, show_default=True, type=int, help="Tokens kept per prompt (its end)."
)
@click.option("--workers", default=1, show_default=True, type=int, help="OpenCompass tasks run at once.")
@method_options
def opencompass_run(
    models, ropes, methods_file, dtype, device, device_map, batch_size, output, backend, engine, datasets,
    data_root, work_dir, max_seq_len, workers,
):  # fmt: skip
    """Evaluate methods with OpenCompass and print Table 5 (categories and Total)."""
    from coca_eval.opencompass.config import ModelSettings
    from coca_eval.opencompass.task import evaluate_opencompass

    if device_map is not None:
        raise CocaEvalError("--device-map is not supported by the OpenCompass bridge; use --device")
    methods = _methods(models, ropes, methods_file, dtype, batch_size, backend)
    if any(m.backend != "hf" for m in methods):
        raise CocaEvalError("the OpenCompass bridge runs the hf backend only (drop --backend / backend:)")
    settings = ModelSettings(device=device, batch_size=batch_size, max_seq_len=max_seq_len)
    run = evaluate_opencompass(methods, datasets, data_root, work_dir, output, settings, stderr, workers)
    stderr.print(f"OpenCompass work directory: {run.config['work_dir']}")
    _print_table5(run, output)


@opencompass.command("import")
@click.argument("summary", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the results JSON here."
)
def opencompass_import(summary, output) -> None:
    """Turn an OpenCompass summary CSV into our cells (missing results become error cells)."""
    from coca_eval.opencompass.task import import_summary

    run = import_summary(summary, output)
    _print_table5(run, output)


@cli.command()
def tasks() -> None:
    """List registered tasks and their presets."""
    from rich.table import Table

    from coca_eval.presets import list_presets

    table = Table(title="Tasks and presets")
    for column in ("task", "preset", "description"):
        table.add_column(column)
    for preset in list_presets():
        table.add_row(preset.task, preset.name, preset.description)
    stdout.print(table)


@cli.command()
def models() -> None:
    """List model presets (any local directory or hub id works too)."""
    from rich.table import Table

    from coca_eval.models.presets import MODEL_PRESETS

    table = Table(title="Model presets")
    for column in ("name", "model", "params", "trained context", "source"):
        table.add_column(column)
    for name, preset in MODEL_PRESETS.items():
        table.add_row(
            name, preset.display_name, preset.params, str(preset.trained_context), preset.description
        )
    stdout.print(table)


@cli.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(["md", "latex", "csv", "html"]),
    help="Output format (repeatable). Default: md.",
)
@click.option("--out", "out_dir", default="report", show_default=True, type=click.Path(path_type=Path))
@click.option("--definition", help="Report definition: a YAML file or a shipped name (reports/definitions/).")
@click.option("--title", help="Report title.")
@click.option("--paper", multiple=True, help="Set a paper table beside ours: table1..table5, v1-table4, ...")
@click.option("--delta-vs", help="Also show every row as signed differences to this method (Table 3 style).")
@click.option("--intervals", is_flag=True, help="Show 95% intervals (Wilson; document bootstrap for PPL).")
@click.option("--show-n", is_flag=True, help="Show n (documents or samples) in every cell.")
@click.option("--digits", type=int, help="Decimals of printed values (default 2).")
@click.option(
    "--trained-context", type=int, help="Trained context for Fig 5 (default: from the run's model)."
)
@click.option("--no-plots", is_flag=True, help="Tables only.")
def report(runs, formats, out_dir, definition, no_plots, **overrides) -> None:
    """Tables (Markdown, LaTeX, CSV, HTML) and plots from one or more results files, like the paper's.

    \b
    coca-eval report runs/t1.json runs/t2.json --paper table1 --paper table2 --format md --format latex
    coca-eval report run.json --definition coca-table1 --intervals --delta-vs "LLaMA-7B"
    """
    from coca_eval.report import build_report, load_definition
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    spec = load_definition(definition).with_overrides(**overrides, plots=False if no_plots else None)
    output = build_report(runs, spec, formats or ("md",), out_dir)
    for table in output.tables:
        stdout.print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
    stderr.print(f"report written to {out_dir} ({len(output.files)} files, {len(output.plots)} plots)")


@cli.command()
@click.option("--baseline", multiple=True, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--candidate", multiple=True, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--max-ppl-rise", default="2%", show_default=True, help="Tolerated relative PPL rise.")
@click.option("--max-acc-drop", default="0.05", show_default=True, help="Tolerated passkey accuracy drop.")
@click.option("--alpha", default=0.05, show_default=True, type=float, help="Significance level (overall).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
@click.option("--bootstrap", "n_boot", default=5000, show_default=True, type=int, help="Bootstrap draws.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON instead of a table.")
def gate(baseline, candidate, max_ppl_rise, max_acc_drop, alpha, seed, n_boot, as_json) -> None:
    """Fail (exit 1) when a candidate run regresses against a baseline run, beyond tolerance and
    significantly; exit 2 when the runs were made under different protocols.

    \b
    coca-eval gate --baseline base/ppl.json --candidate new/ppl.json --max-ppl-rise 2%
    coca-eval gate --baseline b/ppl.json --candidate c/ppl.json --baseline b/pk.json --candidate c/pk.json
    """
    import json

    from coca_eval.gate import append_step_summary, make_options, rich_summary, run_gate, verdict_json
    from coca_eval.results import load_run

    if len(baseline) != len(candidate):
        raise CocaEvalError("give one --candidate for every --baseline (they pair up in order)")
    options = make_options(max_ppl_rise, max_acc_drop, alpha, seed, n_boot)
    pairs = [(load_run(b), load_run(c)) for b, c in zip(baseline, candidate, strict=True)]
    result = run_gate(pairs, options)
    if as_json:
        click.echo(json.dumps(verdict_json(result), indent=2))
    else:
        stdout.print(rich_summary(result))
        for note in result.notes:
            stdout.print(f"note: {note}", markup=False)
    append_step_summary(result)
    sys.exit(result.exit_code)


_NoArgsIsHelp = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv: list[str] | None = None) -> None:
    """Entry point: click in non-standalone mode so every error is exactly one line."""
    try:
        cli.main(args=argv, prog_name="coca-eval", standalone_mode=False)
    except CocaEvalError as exc:
        stderr.print(f"coca-eval: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except _NoArgsIsHelp as exc:
        stdout.print(exc.ctx.get_help() if exc.ctx else "", markup=False, highlight=False)
        sys.exit(0)
    except click.ClickException as exc:
        stderr.print(
            f"coca-eval: error: {exc.format_message()}", markup=False, highlight=False, soft_wrap=True
        )
        sys.exit(exc.exit_code if exc.exit_code != 1 else 2)
    except (KeyboardInterrupt, click.exceptions.Abort):
        stderr.print("coca-eval: interrupted; finished work is journaled, rerun the same command to resume")
        sys.exit(130)


if __name__ == "__main__":
    main()
