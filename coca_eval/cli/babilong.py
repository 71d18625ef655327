"""``coca-eval babilong``: bAbI reasoning with its facts spread through long text, at exact lengths."""

from __future__ import annotations

import click

from coca_eval.babilong.params import SOURCES
from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET = "babilong-quick"
TASK = "babilong"

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@preset_choice_option(PRESET, eager=False)
@_preset_option("--tasks", key="tasks", help="qa1..qa20, babilong (qa1-qa5, the paper's set) or all.")
@shared.lengths_option(_preset_option)
@shared.sampling_options(
    _preset_option,
    "Samples per task and length, or auto: rounds until each cell's 95 % interval is narrower "
    "than --target-width.",
)
@shared.seed_option(_preset_option)
@shared.source_option(
    _preset_option,
    SOURCES,
    "generate: bAbI facts spread through book text to exactly N (this project's way); babilong: "
    "BABILong's prepared sets (comparable with its published numbers).  [default: generate]",
)
@_preset_option(
    "--babi-data",
    key="babi_data",
    help="bAbI's tasks_1-20_v1-2 folder, or hub to fetch it (--source generate); without it qa1-qa3 come "
    "from our generator.",
)
@_preset_option(
    "--data",
    key="data",
    help="BABILong's prepared sets (--source babilong): a hub dataset id (default "
    "RMT-team/babilong-1k-samples; RMT-team/babilong has 100 samples up to 10M) or "
    "DIR/<length>/<task>.jsonl.",
)
@_preset_option(
    "--haystack", key="haystack", help="The book text the facts are spread through: books or a file."
)
@_preset_option(
    "--prompt-parts",
    key="prompt_parts",
    help="Which of BABILong's prompt parts to keep: instruction,examples,post_prompt (default all) or none.",
)
@shared.chat_template_option(
    _preset_option,
    "none (default: BABILong's prompts work without one), auto (the tokenizer's) or a Jinja file.",
)
@shared.bos_option(_preset_option)
@shared.share_option(
    _preset_option,
    "The effective length is the longest N whose 95 % lower bound reaches this share (%) of the "
    "average at the shortest N.  [default: 85]",
)
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def babilong(preset, decoding, **overrides):
    """BABILong: bAbI reasoning tasks with their facts spread through long text, accuracy per task and
    length, and the effective length.

    \b
    coca-eval babilong                      # babilong-quick: SmolLM2-135M-Instruct, qa1-qa3 at 1k, 2k
    coca-eval babilong --tasks babilong --lengths 4k..32k --model DIR --babi-data hub
    """
    from coca_eval.cli.generation import print_console, run_family

    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
