"""The options of the generation commands that mean the same in every family, each declared once.

``option`` is the command's preset-valued option factory
(:func:`~coca_eval.cli.preset_options.preset_option_factory`), or :func:`plain_option` for a command
without presets; a family whose wording differs passes its own ``help``.
"""

from __future__ import annotations

import click

from coca_eval.cli.options import SampleCount, with_options
from coca_eval.params import PROMPT_BOS_CHOICES

EXACT_LENGTHS = "Lengths N in tokens (prompt + answer budget): 1k..128k."
SAMPLES = "Samples per task and length, or auto."
SEED = "Seed of every sample (same prompts for every method)."
BOS = "BOS: auto, always, never."
CHAT_TEMPLATE = "auto (the tokenizer's), none, or a Jinja file."
BOS_IN_FRONT = "BOS in front of each prompt: auto (as the tokenizer does), always, never."
SHARE = "Effective length: % of the shortest length's average."
MAX_SAMPLES = "With --samples auto: the most per cell."
TARGET_WIDTH = "With --samples auto: the interval width to stop at."
MAX_SAMPLES_PER_CELL = "With --samples auto: the most samples per cell."
CELL_WIDTH = "With --samples auto: stop a cell once its 95 % interval is narrower than this many points"


def plain_option(*names: str, key: str, **kwargs):
    """An option with no preset behind it (``key`` is its parameter's name, as click derives it)."""
    return click.option(*names, **kwargs)


def lengths_option(option, help: str = EXACT_LENGTHS):
    return option("--lengths", key="lengths", help=help)


def samples_option(option, help: str = SAMPLES, keywords: tuple[str, ...] = ()):
    """``--samples``: a count, ``auto``, or the family's own ``keywords`` (HELMET's per-task counts)."""
    return option("--samples", key="samples", type=SampleCount(keywords), help=help)


def max_samples_option(option, help: str = MAX_SAMPLES):
    return option("--max-samples", key="max_samples", type=int, help=help)


def target_width_option(option, help: str = TARGET_WIDTH):
    return option("--target-width", key="target_width", type=float, help=help)


def sampling_options(
    option,
    help: str = SAMPLES,
    keywords: tuple[str, ...] = (),
    max_samples: str = MAX_SAMPLES,
    target_width: str = TARGET_WIDTH,
):
    """``--samples`` (with the family's own ``keywords``), ``--max-samples`` and ``--target-width``, each
    with the family's help where its wording differs (RULER's auto also stops at its threshold)."""
    options = (
        samples_option(option, help, keywords),
        max_samples_option(option, max_samples),
        target_width_option(option, target_width),
    )
    return lambda command: with_options(command, options)


def seed_option(option, help: str = SEED):
    return option("--seed", key="seed", type=int, help=help)


def chat_template_option(option, help: str = CHAT_TEMPLATE):
    """``--chat-template``: how a prompt is framed; the help says the family's default and what counts."""
    return option("--chat-template", key="chat_template", help=help)


def bos_option(option, help: str = BOS):
    return option("--bos", key="bos", type=click.Choice(PROMPT_BOS_CHOICES), help=help)


def source_option(option, sources: tuple[str, ...], help: str):
    """``--source``: where a family's samples come from, built here or a peer's published set."""
    return option("--source", key="source", type=click.Choice(sources), help=help)


def protocol_option(option, protocols: tuple[str, ...], help: str):
    """``--protocol``: exact lengths (this project's), or the way the family's own harness builds them."""
    return option("--protocol", key="protocol", type=click.Choice(protocols), help=help)


def share_option(option, help: str = SHARE):
    """``--share``: the bar of a family's effective length, % of its average at the shortest length."""
    return option("--share", key="share", type=float, help=help)


def published_set_options(
    option, protocols: tuple[str, str], protocol: str, per_length: str, seed: str, data: str
):
    """The options of a family that reads a published set (LongBench, AA-LCR): ``--protocol`` (exact, or
    the set's own), the lengths, the sampling options with ``per_length`` saying what is sampled, the
    seed and ``--data`` (hub, smoke or a folder), each with the family's own help."""
    options = (
        protocol_option(option, protocols, protocol),
        lengths_option(option, "Lengths in tokens: 1k..128k (see --protocol)."),
        sampling_options(option, per_length),
        seed_option(option, seed),
        option("--data", key="data", help=data),
    )
    return lambda command: with_options(command, options)
