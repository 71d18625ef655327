"""``coca-eval mrcr``: reproduce the i-th of several identical requests' answers from a long
conversation, at exact lengths or on OpenAI's published conversations."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET = "mrcr-quick"
TASK = "mrcr"
SOURCES = ("generate", "openai", "deepmind")

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@preset_choice_option(PRESET, eager=False)
@_preset_option("--tasks", key="tasks", help="2needle, 4needle, 8needle, comma-separated.")
@click.option("--needles", help="Needle counts, the same as --tasks: 2,4,8.")
@shared.lengths_option(_preset_option)
@shared.sampling_options(_preset_option)
@shared.seed_option(_preset_option, "Seed of every conversation (same for every method).")
@shared.source_option(
    _preset_option,
    SOURCES,
    "generate: conversations built here, exactly N tokens (offline); openai: OpenAI's published "
    "conversations; deepmind: DeepMind's MRCR v2 CSVs (each published row in the shortest N that holds "
    "it, longer ones skipped and counted).",
)
@_preset_option(
    "--data",
    key="data",
    help="Published rows: hub or a folder holding 2needle/ ... (openai); a folder of mrcr_v2p1_*.csv "
    "(deepmind).",
)
@shared.chat_template_option(
    _preset_option,
    "auto (the tokenizer's), none (a plain User:/Assistant: transcript), or a Jinja file.",
)
@shared.bos_option(_preset_option)
@shared.share_option(_preset_option)
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def mrcr(preset, needles, decoding, **overrides):
    """MRCR: a long conversation of requests for writing holds 2, 4 or 8 identical requests; the model
    must repeat the i-th one's answer behind a random string. Scored as OpenAI's card scores it
    (SequenceMatcher ratio, 0 without the string), per needle count and length, with the effective
    length.

    \b
    coca-eval mrcr                    # mrcr-quick: SmolLM2-135M-Instruct, 2 and 4 needles, 1k, 2k
    coca-eval mrcr --model DIR --needles 2,4,8 --lengths 4k..64k
    coca-eval mrcr --preset mrcr --model DIR --data hub
    """
    from coca_eval.cli.generation import print_console, run_family
    from coca_eval.errors import CocaEvalError
    from coca_eval.mrcr.params import tasks_of_needles

    if needles is not None:
        if overrides.get("tasks") is not None:
            raise CocaEvalError("--needles and --tasks name the same needle counts: give one")
        overrides["tasks"] = tasks_of_needles(needles)
    saved = run_family(TASK, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(TASK, *saved)
