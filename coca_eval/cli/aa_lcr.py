"""``coca-eval aa-lcr``: Artificial Analysis' long-context reasoning questions (AA-LCR) over their
document sets, by the card's prompt binned by length or at exact lengths, scored by a model judge."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET, TASK = "aa-lcr-quick", "aa_lcr"

_preset_option = preset_option_factory(PRESET, TASK)


@click.command(name="aa-lcr")
@preset_choice_option(PRESET, eager=False)
@shared.published_set_options(
    _preset_option,
    ("exact", "published"),
    protocol="exact: every prompt N minus the answer budget, the question's documents whole and other "
    "documents filling the rest; published: the card's prompt, each length holding the questions "
    "whose whole prompt fits it.",
    per_length="Questions per length, or auto.",
    seed="Seed of the fillers' order (exact) and of --samples auto.",
    data="hub (ArtificialAnalysis/AA-LCR), smoke (the invented set shipped here), or a folder holding "
    "AA-LCR_Dataset.csv and its lcr folder or extracted-text zip.",
)
@_preset_option("--answer-tokens", key="answer_tokens", type=int, help="The answer budget in tokens.")
@_preset_option(
    "--judge", key="judge", help="The judge: a model preset, a directory, a hub id, or an OpenAI-compatible "
    "server's URL (URL#model where it serves several). Greedy; every call journaled.",
)  # fmt: skip
@_preset_option(
    "--judge-protocol", key="judge_protocol", type=click.Choice(("1.0", "1.1")),
    help="The card's judge prompt: 1.0 (one message, a bare verdict) or 1.1 (grading notes, a JSON verdict).",
)  # fmt: skip
@_preset_option("--judge-max-tokens", key="judge_max_tokens", type=int, help="The judge's reply budget.")
@_preset_option(
    "--haystack", key="haystack", help="Filler prose past the other documents (exact): books or a file."
)
@shared.chat_template_option(_preset_option)
@shared.bos_option(_preset_option, "BOS: auto, always, never.")
@shared.share_option(_preset_option)
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def aa_lcr(preset, decoding, **overrides):
    """AA-LCR: questions that need reasoning over several real documents (about 100k tokens a set),
    answered from the card's prompt and judged CORRECT or INCORRECT by a model with the card's
    equality-checker prompt. The default preset runs the invented smoke set; it needs a judge.

    \b
    coca-eval aa-lcr --judge URL           # aa-lcr-quick: smoke set, SmolLM2-135M
    coca-eval aa-lcr --preset aa-lcr --model DIR --judge http://localhost:8000/v1
    coca-eval aa-lcr --model DIR --data DIR --judge JUDGE_DIR --lengths 32k..128k
    """
    from coca_eval.cli.generation import print_console, run_family

    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
