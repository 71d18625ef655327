"""``coca-eval longbench``: LongBench v1's tasks on real documents, by LongBench's own protocol or at
exact lengths (v2 is not built yet)."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET = "longbench-quick"
TASK = "longbench"

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@preset_choice_option(PRESET, eager=False)
@click.option(
    "--version", "version", type=click.Choice(["1", "2"]), default="1", show_default=True,
    help="LongBench v1 (21 tasks) or v2 (not built yet).",
)  # fmt: skip
@_preset_option("--tasks", key="tasks", help="LongBench's task names, comma-separated (narrativeqa, ...).")
@_preset_option(
    "--protocol",
    key="protocol",
    type=click.Choice(("exact", "longbench")),
    help="exact: every prompt N minus the answer budget, rows shorter left out of that N; longbench: "
    "pred.py's prompts, each length its max_length (middle cut), the answer past it.",
)
@shared.lengths_option(_preset_option, "Lengths in tokens: 1k..128k (see --protocol).")
@shared.sampling_options(_preset_option, "Rows per task and length, or auto.")
@shared.seed_option(_preset_option, "Seed of --samples auto's visiting order.")
@_preset_option(
    "--data", key="data", help="hub (THUDM/LongBench), smoke (the smoke set shipped here), or a folder "
    "holding data/<task>.jsonl (or LongBench's data.zip).",
)  # fmt: skip
@_preset_option(
    "--subset", key="subset", type=click.Choice(("full", "e")), help="full, or e: LongBench-E's files."
)
@_preset_option(
    "--chat-template",
    key="chat_template",
    help="auto (the tokenizer's), none, or a Jinja file; never on the tasks pred.py runs without one.",
)
@shared.bos_option(_preset_option, "BOS (exact): auto, always, never.")
@shared.share_option(_preset_option)
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def longbench(preset, version, decoding, **overrides):
    """LongBench v1: 21 tasks on real documents (single- and multi-document QA, summaries, few-shot,
    synthetic, code), English and Chinese, scored by LongBench's own metrics, with its category
    averages.

    \b
    coca-eval longbench                    # longbench-quick: smoke set, SmolLM2-135M-Instruct, 1k, 2k
    coca-eval longbench --preset longbench --model DIR --data hub
    coca-eval longbench --model DIR --data DIR --lengths 8k..128k
    """
    from coca_eval.cli.generation import print_console, run_family
    from coca_eval.errors import CocaEvalError

    if version == "2":
        raise CocaEvalError("longbench --version 2 is not built yet: only v1 runs (--version 1)")
    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
