"""``coca-eval graphwalks``: BFS and parents over a directed graph's edge list, at exact lengths or on
OpenAI's published rows."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET = "graphwalks-quick"
TASK = "graphwalks"
SOURCES = ("generate", "openai")

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@preset_choice_option(PRESET, eager=False)
@_preset_option("--tasks", key="tasks", help="bfs, parents, or both: bfs,parents.")
@shared.lengths_option(_preset_option)
@shared.sampling_options(_preset_option)
@shared.seed_option(_preset_option, "Seed of every graph (same prompts for every method).")
@shared.source_option(
    _preset_option,
    SOURCES,
    "generate: random graphs filled to exactly N (offline); openai: OpenAI's published rows, each "
    "in the shortest N that holds it (longer rows skipped and counted).",
)
@_preset_option(
    "--data", key="data", help="OpenAI's rows (--source openai): hub, or a folder of *.parquet/*.jsonl."
)
@shared.chat_template_option(_preset_option)
@shared.bos_option(_preset_option)
@shared.share_option(_preset_option)
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
