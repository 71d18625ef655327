"""``coca-eval helmet``: HELMET's model-development tasks at exact token lengths, by category."""

from __future__ import annotations

import click

from coca_eval.cli.generation import decoding_options
from coca_eval.cli.options import SampleCount
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
@decoding_options(TASK)
def helmet(preset, decoding, **overrides):
    """HELMET's model-development tasks at exact token lengths: scores per task and length, category
    averages, and an effective length per category.

    \b
    coca-eval helmet                                  # helmet-quick: SmolLM2-135M-Instruct at 1k and 2k
    coca-eval helmet --preset helmet --model DIR --data HELMET/data   # HELMET's categories, 8k..64k
    coca-eval helmet --tasks json_kv --lengths 4k,8k --samples 50 --chat-template auto
    """
    from coca_eval.cli.generation import print_console, run_family

    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
