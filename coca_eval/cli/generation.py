"""What every generation family's command prints when its run ends, how it fails on cells that could
not run, and the whole command of a family built on the generation base (:func:`family_command`)."""

from __future__ import annotations

import functools

import click


def print_run_tables(run, written, heading: str, method_table, summary) -> None:
    """What a generation family prints when its run ends: ``heading``, each method's table or tables
    (``method_table(method)``), then ``summary()``, each with its notes; a shard's partial run prints
    only what it holds. A cell that could not run then fails the command (see
    :func:`refuse_error_cells`)."""
    from coca_eval.cli.output import shard_summary, stderr, stdout
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    if any(cell.status == "partial" for cell in run.cells):
        stderr().print(shard_summary(run, written), markup=False, highlight=False, soft_wrap=True)
        return
    from coca_eval.generation.report import thought_notes

    stdout().print(heading)
    tables = []
    for method in dict.fromkeys(c.method for c in run.cells):
        table = method_table(method)
        tables.extend(table if isinstance(table, list) else [table])
    last = summary()
    last.notes = [*last.notes, *thought_notes(run.cells)]  # thoughts the think budget cut, per cell
    for table in (*tables, last):
        stdout().print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
        for note in table.notes:
            stdout().print(note, markup=False, highlight=False, soft_wrap=True)
    stderr().print(f"results written to {written}", markup=False, highlight=False, soft_wrap=True)
    refuse_error_cells(run)


def print_console(task: str, run, written, params=None, heading: str | None = None) -> None:
    """:func:`print_run_tables` with the tables the family's spec gives (its ``console`` hook);
    ``heading`` replaces the spec's (an imported run has none of its own)."""
    from coca_eval.taskspec import TASKS

    console = TASKS.get(task).console(run, params)
    print_run_tables(run, written, heading or console.heading, console.method_table, console.summary)


def refuse_error_cells(run) -> None:
    """A cell that could not run (a length below the prompt's fixed parts, or past the model's
    positions, or a sample answered from non-finite logits) is an ``error`` cell in the results, and the
    command says so in one line, exit 2: every generation family alike (passkey's cells have no dataset
    and are named by their length)."""
    from coca_eval.errors import CocaEvalError

    errors = [c for c in run.cells if c.status == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more error cells)" if len(errors) > 1 else ""
        where = f"{first.dataset} @ {first.length}" if first.dataset else f"{first.task} @ {first.length}"
        raise CocaEvalError(f"{where}: {first.detail.get('error')}{more}")


def evaluate_generation(task: str, params, chosen, preset: str | None, **options):
    """The run of a generation command on the rows ``chosen`` names, with the decoding ``options``
    every such command has (``no_prefix_reuse``, ``batch_size``, ``dump_prompts``, a family's own);
    ``(run, written)``, or None on a torchrun rank other than 0 (rank 0 writes and prints)."""
    from coca_eval.cli.evaluation import evaluate_and_save
    from coca_eval.errors import CocaEvalError

    thinking = options.get("thinking")
    if thinking is not None and thinking.effort and not (chosen.methods_file or chosen.backend == "openai"):
        raise CocaEvalError(
            "--reasoning-effort is passed to a chat API (--backend openai with a chat template) only"
        )
    options["prefix_reuse"] = not options.pop("no_prefix_reuse", False)
    return evaluate_and_save(task, params, chosen, preset, **options)


def run_family(task: str, preset: str, overrides: dict, **options):
    """A generation command's run: the rows its method options in ``overrides`` choose, its spec's
    parameters from ``preset`` with the rest of ``overrides`` laid over it, decoded with ``options``
    (see :func:`evaluate_generation`); ``(run, written, params)``, or None on a torchrun rank other
    than 0 (rank 0 writes and prints)."""
    from coca_eval.cli.evaluation import MethodOptions
    from coca_eval.cli.preset_options import preset_values
    from coca_eval.taskspec import TASKS

    chosen = MethodOptions.take(overrides)
    params = TASKS.get(task).make_params(preset_values(preset, task, overrides))
    saved = evaluate_generation(task, params, chosen, preset, **options)
    return None if saved is None else (*saved, params)


def thinking_options(command):
    """``--thinking``, ``--think-budget``, ``--think-markers`` and ``--reasoning-effort`` of a generation
    command (passed on under their names; see :mod:`coca_eval.generation.thinking`)."""
    from coca_eval.cli.options import with_options
    from coca_eval.generation.thinking import DEFAULT_THINK_BUDGET, THINKING_MODES

    options = [
        click.option(
            "--thinking",
            type=click.Choice(THINKING_MODES),
            default="auto",
            show_default=True,
            help="Thinking of a reasoning model: on or off through chat templates that take "
            "enable_thinking; auto keeps the model's own default. A thought is decoded apart, before the "
            "answer, and only the answer is scored.",
        ),
        click.option(
            "--think-budget",
            type=int,
            default=None,
            help=f"Tokens the model may think (default {DEFAULT_THINK_BUDGET}); a thought still open "
            "then is closed by its end marker. Counted apart from N.",
        ),
        click.option(
            "--think-markers",
            default=None,
            metavar="OPEN,CLOSE",
            help="The thought's markers (default: found in the tokenizer or its chat template, e.g. "
            "<think>,</think>).",
        ),
        click.option(
            "--reasoning-effort",
            default=None,
            metavar="EFFORT",
            help="Sent as reasoning_effort to a chat API server (e.g. low, medium, high).",
        ),
    ]
    return with_options(command, options)


FROM_SCRATCH = "Decode every sample from scratch (slower, same outputs)."
FROM_SCRATCH_SHORT = "Decode every sample from scratch (same outputs)."


def decoding_options(
    task: str, prefix_reuse_help: str = FROM_SCRATCH, output_help: str | None = None, how: tuple = ()
):
    """The options every generation command takes after its own: ``--no-prefix-reuse``, then ``how``
    (the command's own options on how it decodes: RULER's ``--replay``), ``--batch-size``,
    ``--dump-prompts``, the thinking options (:func:`thinking_options`) and the
    method options (models, backends, the journal and resume, shards). The decoding and thinking
    options reach the command as one ``decoding`` dict, which it hands to :func:`evaluate_generation`
    as they are (the thinking settings as one value, checked here, before any model loads, and left
    out when they are the defaults)."""
    from coca_eval.cli.options import batch_size_option, dump_prompts_option, method_options, with_options

    output_help = output_help or (
        "Write the results JSON here (its journal beside it: rerun the same command to resume). "
        f"Default: runs/{task}-TIMESTAMP.json."
    )
    decorators = [
        click.option("--no-prefix-reuse", is_flag=True, help=prefix_reuse_help),
        *how,
        batch_size_option,
        dump_prompts_option,
        thinking_options,
        method_options(output_help=output_help, journaled=True, splits=True),
    ]

    def decorate(func):
        @functools.wraps(func)
        def command(
            no_prefix_reuse,
            batch_size,
            dump_prompts,
            thinking,
            think_budget,
            think_markers,
            reasoning_effort,
            **kwargs,
        ):
            from coca_eval.generation.thinking import Thinking

            decoding = dict(no_prefix_reuse=no_prefix_reuse, batch_size=batch_size, dump_prompts=dump_prompts)
            settings = Thinking.of(thinking, think_budget, think_markers, reasoning_effort)
            if not settings.default:
                decoding["thinking"] = settings
            return func(decoding=decoding, **kwargs)

        return with_options(command, decorators)

    return decorate


def family_command(task: str, summary: str):
    """A generation family's command with every option the base gives (tasks, exact lengths, sampling,
    seed, haystack, chat template, BOS, share, batch size, ``--dump-prompts``, methods, backends,
    shards, resume): the family's spec makes the parameters and prints the tables (its ``console``)."""
    from coca_eval.cli import generation_options as shared
    from coca_eval.cli.options import with_options

    plain = shared.plain_option

    def command(decoding, **overrides):
        from coca_eval.cli.evaluation import MethodOptions
        from coca_eval.taskspec import TASKS

        spec, chosen = TASKS.get(task), MethodOptions.take(overrides)
        params = spec.make_params({k: v for k, v in overrides.items() if v is not None})
        saved = evaluate_generation(task, params, chosen, None, **decoding)
        if saved is not None:
            print_console(task, *saved, params)

    decorators = [
        click.option("--tasks", help="The family's tasks, comma-separated (default: all)."),
        shared.lengths_option(plain, "Lengths N in tokens (prompt + answer budget): 1k,2k or 1k..8k."),
        shared.sampling_options(plain),
        shared.seed_option(plain),
        click.option("--haystack", help="The text the context is filled from: books or a file."),
        shared.chat_template_option(plain),
        shared.bos_option(plain),
        shared.share_option(plain),
        decoding_options(
            task,
            FROM_SCRATCH_SHORT,
            f"Write the results JSON here (its journal beside it: rerun to resume). Default: "
            f"runs/{task}-TIMESTAMP.json.",
        ),
    ]
    command.__doc__ = summary
    return click.command(name=task, help=summary)(with_options(command, decorators))
