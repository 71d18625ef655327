"""``coca-eval graphwalks``: BFS and parents over a directed graph's edge list, at exact lengths or on
OpenAI's published rows."""

from __future__ import annotations

import click

from coca_eval.cli.options import (
    SampleCount,
    auto_sampling_options,
    batch_size_option,
    dump_prompts_option,
    method_options,
)
from coca_eval.cli.preset_options import preset_option_factory
from coca_eval.params import PROMPT_BOS_CHOICES

PRESET = "graphwalks-quick"
TASK = "graphwalks"
SOURCES = ("generate", "openai")

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@click.option("--preset", default=PRESET, show_default=True, help="Task preset (see `coca-eval tasks`).")
@_preset_option("--tasks", key="tasks", help="bfs, parents, or both: bfs,parents.")
@_preset_option("--lengths", key="lengths", help="Lengths N in tokens (prompt + answer budget): 1k..128k.")
@_preset_option("--samples", key="samples", type=SampleCount(), help="Samples per task and length, or auto.")
@auto_sampling_options(_preset_option)
@_preset_option("--seed", key="seed", type=int, help="Seed of every graph (same prompts for every method).")
@_preset_option(
    "--source",
    key="source",
    type=click.Choice(SOURCES),
    help="generate: random graphs filled to exactly N (offline); openai: OpenAI's published rows, each "
    "in the shortest N that holds it (longer rows skipped and counted).",
)
@_preset_option(
    "--data", key="data", help="OpenAI's rows (--source openai): hub, or a folder of *.parquet/*.jsonl."
)
@_preset_option("--chat-template", key="chat_template", help="auto (the tokenizer's), none, or a Jinja file.")
@_preset_option("--bos", key="bos", type=click.Choice(PROMPT_BOS_CHOICES), help="BOS: auto, always, never.")
@_preset_option(
    "--share", key="share", type=float, help="Effective length: % of the shortest length's average."
)
@click.option("--no-prefix-reuse", is_flag=True, help="Decode every sample from scratch (same outputs).")
@batch_size_option
@dump_prompts_option
@method_options(
    output_help="Write the results JSON here (its journal beside it: rerun the same command to resume). "
    "Default: runs/graphwalks-TIMESTAMP.json.",
    journaled=True,
    splits=True,
)
def graphwalks(preset, no_prefix_reuse, batch_size, dump_prompts, **overrides):
    """GraphWalks: the nodes a BFS reaches at a depth, or a node's parents, in a directed graph given
    as its edge list; F1 of the answer's node set per task and length, and the effective length.

    \b
    coca-eval graphwalks              # graphwalks-quick: SmolLM2-135M-Instruct, bfs and parents, 1k, 2k
    coca-eval graphwalks --model DIR --lengths 4k..64k
    coca-eval graphwalks --preset graphwalks --model DIR --data hub
    """
    from coca_eval.cli.evaluation import MethodOptions
    from coca_eval.cli.generation import evaluate_generation, print_run_tables
    from coca_eval.cli.preset_options import preset_values
    from coca_eval.graphwalks.params import make_graphwalks_params
    from coca_eval.taskspec import TASKS

    chosen = MethodOptions.take(overrides)
    params = make_graphwalks_params(preset_values(preset, TASK, overrides))
    options = dict(no_prefix_reuse=no_prefix_reuse, batch_size=batch_size, dump_prompts=dump_prompts)
    saved = evaluate_generation(TASK, params, chosen, preset, **options)
    if saved is None:
        return
    run, written = saved
    console = TASKS.get(TASK).console(run, params)
    heading = console.heading.replace("[/bold],", f"[/bold], source {params.source},", 1)
    print_run_tables(run, written, heading, console.method_table, console.summary)
