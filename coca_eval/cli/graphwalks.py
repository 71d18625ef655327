"""``coca-eval graphwalks``: BFS and parents over a directed graph's edge list, at exact lengths or on
OpenAI's published rows."""

from __future__ import annotations

import click

from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.options import SampleCount, auto_sampling_options
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
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def graphwalks(preset, decoding, **overrides):
    """GraphWalks: the nodes a BFS reaches at a depth, or a node's parents, in a directed graph given
    as its edge list; F1 of the answer's node set per task and length, and the effective length.

    \b
    coca-eval graphwalks              # graphwalks-quick: SmolLM2-135M-Instruct, bfs and parents, 1k, 2k
    coca-eval graphwalks --model DIR --lengths 4k..64k
    coca-eval graphwalks --preset graphwalks --model DIR --data hub
    """
    from coca_eval.cli.generation import print_console, run_family

    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
