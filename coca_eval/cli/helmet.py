"""``coca-eval helmet``: HELMET's model-development tasks at exact token lengths, by category."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory
from coca_eval.helmet.params import PROTOCOLS
from coca_eval.helmet.tasks import CATEGORIES

PRESET = "helmet-quick"
TASK = "helmet"

_preset_option = preset_option_factory(PRESET, TASK)
TASKS_HELP = (  # the categories as the task groups name them, so the help follows HELMET's table
    "HELMET tasks, comma-separated (`coca-eval tasks` lists them), a category "
    f"({', '.join(c.lower() for c in CATEGORIES)}) or helmet (every task)."
)


@click.command()
@preset_choice_option(PRESET, eager=False)
@_preset_option("--tasks", key="tasks", help=TASKS_HELP)
@shared.lengths_option(_preset_option, "Lengths N in tokens (prompt + answer budget): 8k..64k.")
@shared.sampling_options(
    _preset_option,
    "Samples per task and length, helmet (each task's count in HELMET's configs: 100, ICL 500), or "
    "auto: rounds until each cell's 95 % interval is narrower than --target-width.",
    keywords=("helmet",),
    max_samples=shared.MAX_SAMPLES_PER_CELL,
    target_width=f"{shared.CELL_WIDTH}.",
)
@shared.seed_option(_preset_option)
@shared.protocol_option(
    _preset_option,
    PROTOCOLS,
    "exact: prompt + answer budget = N in the model's tokens, whole units while they fit; helmet: "
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
@shared.chat_template_option(
    _preset_option,
    "none (HELMET's default: base-style prompts, use_chat_template false), auto (the tokenizer's "
    "template) or a Jinja file; the template's tokens count inside N.  [default: none]",
)
@shared.bos_option(_preset_option, shared.BOS_IN_FRONT)
@shared.share_option(
    _preset_option,
    "A category's effective length is the longest N whose 95 % lower bound reaches this share (%) "
    "of its average at the shortest N.  [default: 85]",
)
@_preset_option(
    "--judge",
    key="judge",
    help="The judge of LongQA (narrativeqa) and the summaries, in HELMET's GPT-4o's place: a model preset, "
    "a directory, a hub id, or an OpenAI-compatible server's URL (URL#model). Greedy; every call journaled.",
)
@_preset_option(
    "--judge-max-tokens", key="judge_max_tokens", type=int, help="The judge's budget per verdict."
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
