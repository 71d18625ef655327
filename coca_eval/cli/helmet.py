"""``coca-eval helmet``: HELMET's model-development tasks at exact token lengths, by category."""

from __future__ import annotations

import click

from coca_eval.cli.options import SampleCount, batch_size_option, dump_prompts_option, method_options
from coca_eval.cli.preset_options import preset_option_factory
from coca_eval.helmet.params import PROTOCOLS
from coca_eval.params import PROMPT_BOS_CHOICES

PRESET = "helmet-quick"
TASK = "helmet"

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@click.option("--preset", default=PRESET, show_default=True, help="Task preset (see `coca-eval tasks`).")
@_preset_option(
    "--tasks",
    key="tasks",
    help="HELMET tasks, comma-separated (`coca-eval tasks` lists them), a category (recall, rag, re-rank, "
    "icl) or helmet (every task).",
)
@_preset_option("--lengths", key="lengths", help="Lengths N in tokens (prompt + answer budget): 8k..64k.")
@_preset_option(
    "--samples",
    key="samples",
    type=SampleCount(("helmet",)),
    help="Samples per task and length, helmet (each task's count in HELMET's configs: 100, ICL 500), or "
    "auto: rounds until each cell's 95 % interval is narrower than --target-width.",
)
@_preset_option(
    "--max-samples", key="max_samples", type=int, help="With --samples auto: the most samples per cell."
)
@_preset_option(
    "--target-width",
    key="target_width",
    type=float,
    help="With --samples auto: stop a cell once its 95 % interval is narrower than this many points.",
)
@_preset_option("--seed", key="seed", type=int, help="Seed of every sample (same prompts for every method).")
@_preset_option(
    "--protocol",
    key="protocol",
    type=click.Choice(PROTOCOLS),
    help="exact: prompt + answer budget = N in the model's tokens, whole units while they fit; helmet: "
    "HELMET's units per length and its truncation (numbers comparable with HELMET's tables).  "
    "[default: exact]",
)
@_preset_option(
    "--haystack",
    key="haystack",
    help="Prose for ruler_niah_mv's essay haystack: books (embedded) or a text file or directory.",
)
@_preset_option(
    "--data",
    key="data",
    help="HELMET's unpacked data directory, or hub (its archive fetched once from the hub and the files a "
    "run needs unpacked into the cache).",
)
@_preset_option(
    "--chat-template",
    key="chat_template",
    help="none (HELMET's default: base-style prompts, use_chat_template false), auto (the tokenizer's "
    "template) or a Jinja file; the template's tokens count inside N.  [default: none]",
)
@_preset_option(
    "--bos",
    key="bos",
    type=click.Choice(PROMPT_BOS_CHOICES),
    help="BOS in front of each prompt: auto (as the tokenizer does), always, never.",
)
@_preset_option(
    "--share",
    key="share",
    type=float,
    help="A category's effective length is the longest N whose 95 % lower bound reaches this share (%) "
    "of its average at the shortest N.  [default: 85]",
)
@click.option(
    "--no-prefix-reuse", is_flag=True, help="Decode every sample from scratch (slower, same outputs)."
)
@batch_size_option
@dump_prompts_option
@method_options(
    output_help="Write the results JSON here (its journal beside it: rerun the same command to resume). "
    "Default: runs/helmet-TIMESTAMP.json.",
    journaled=True,
    splits=True,
)
def helmet(preset, no_prefix_reuse, batch_size, dump_prompts, **overrides):
    """HELMET's model-development tasks at exact token lengths: scores per task and length, category
    averages, and an effective length per category.

    \b
    coca-eval helmet                                  # helmet-quick: SmolLM2-135M-Instruct at 1k and 2k
    coca-eval helmet --preset helmet --model DIR --data HELMET/data   # HELMET's categories, 8k..64k
    coca-eval helmet --tasks json_kv --lengths 4k,8k --samples 50 --chat-template auto
    """
    from coca_eval.cli.evaluation import MethodOptions
    from coca_eval.cli.generation import evaluate_generation
    from coca_eval.cli.preset_options import preset_values
    from coca_eval.helmet.params import make_helmet_params

    chosen = MethodOptions.take(overrides)
    params = make_helmet_params(preset_values(preset, TASK, overrides))
    options = dict(no_prefix_reuse=no_prefix_reuse, batch_size=batch_size, dump_prompts=dump_prompts)
    saved = evaluate_generation(TASK, params, chosen, preset, **options)
    if saved is None:  # a torchrun rank other than 0: rank 0 writes and prints
        return
    run, written = saved
    print_helmet_tables(run, params, written)


def print_helmet_tables(run, params, written) -> None:
    """Each method's tasks x lengths with category averages, then the category summary."""
    from coca_eval.cli.generation import print_run_tables
    from coca_eval.helmet.report import answerless_notes, samples_text, summary_table, task_table

    heading = (
        f"[bold]HELMET[/bold], protocol {params.protocol}, N = prompt + answer budget, "
        f"{samples_text(params.samples)}, seed {params.seed}, chat template {params.chat_template}"
    )
    print_run_tables(
        run,
        written,
        heading,
        lambda method: task_table(run.cells, method, params.share),
        lambda: _with_notes(summary_table(run.cells, params.share), answerless_notes(run)),
    )


def _with_notes(table, notes: list[str]):
    """The summary with the run's own notes after the table's (printed once, under it)."""
    table.notes = [*table.notes, *notes]
    return table
