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
BOS_IN_FRONT = "BOS in front of each prompt: auto (as the tokenizer does), always, never."
SHARE = "Effective length: % of the shortest length's average."


def plain_option(*names: str, key: str, **kwargs):
    """An option with no preset behind it (``key`` is its parameter's name, as click derives it)."""
    return click.option(*names, **kwargs)


def lengths_option(option, help: str = EXACT_LENGTHS):
    return option("--lengths", key="lengths", help=help)


def samples_option(option, help: str = SAMPLES, keywords: tuple[str, ...] = ()):
    """``--samples``: a count, ``auto``, or the family's own ``keywords`` (HELMET's per-task counts)."""
    return option("--samples", key="samples", type=SampleCount(keywords), help=help)


def max_samples_option(option, help: str = "With --samples auto: the most per cell."):
    return option("--max-samples", key="max_samples", type=int, help=help)


def target_width_option(option, help: str = "With --samples auto: the interval width to stop at."):
    return option("--target-width", key="target_width", type=float, help=help)


def sampling_options(option, help: str = SAMPLES):
    """``--samples`` with ``--max-samples`` and ``--target-width``, for a family whose ``--samples auto``
    stops on the interval's width alone (its effective length has no fixed bar)."""
    options = (samples_option(option, help), max_samples_option(option), target_width_option(option))
    return lambda command: with_options(command, options)


def seed_option(option, help: str = SEED):
    return option("--seed", key="seed", type=int, help=help)


def bos_option(option, help: str = BOS):
    return option("--bos", key="bos", type=click.Choice(PROMPT_BOS_CHOICES), help=help)


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
        option("--protocol", key="protocol", type=click.Choice(protocols), help=protocol),
        lengths_option(option, "Lengths in tokens: 1k..128k (see --protocol)."),
        sampling_options(option, per_length),
        seed_option(option, seed),
        option("--data", key="data", help=data),
    )
    return lambda command: with_options(command, options)
