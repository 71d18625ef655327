"""``coca-eval ruler``: RULER's synthetic tasks at exact token lengths, and the effective context length."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory
from coca_eval.generation.params import LENGTH_COUNTS

PRESET = "ruler-quick"
TASK = "ruler"

_preset_option = preset_option_factory(PRESET, TASK)

REPLAY_OPTION = click.option(
    "--replay",
    type=click.Path(exists=True, file_okay=False),
    help="An lm-eval output folder (--log_samples) of its RULER tasks: answer its very prompts instead "
    "of drawing RULER's, so `gate` pairs this run with `coca-eval import lm-eval` of that folder. "
    "Tasks, lengths, samples and the answer budget are lm-eval's.",
)


@click.command()
@preset_choice_option(PRESET, eager=False)
@_preset_option(
    "--tasks",
    key="tasks",
    help="RULER tasks, comma-separated: niah_single_1..3, niah_multikey_1..3, niah_multivalue, "
    "niah_multiquery, vt, cwe, fwe, qa_1, qa_2, or the group ruler (all thirteen).",
)
@shared.lengths_option(_preset_option, "Prompt lengths in tokens: 4k..128k, 4096,8192 or 1k..8k.")
@shared.sampling_options(
    _preset_option,
    "Samples per task and length (RULER: 500), or auto: rounds until each cell's 95 % interval lies "
    "above or below --threshold (or is narrower than --target-width).",
    max_samples=shared.MAX_SAMPLES_PER_CELL,
    target_width=f"{shared.CELL_WIDTH} (0-100), instead of at --threshold.",
)
@shared.seed_option(_preset_option)
@_preset_option(
    "--haystack",
    key="haystack",
    help="Prose for RULER's essay haystack: books (the embedded public-domain books) or a text file or "
    "directory (Paul Graham's essays give RULER's exact setting).",
)
@_preset_option(
    "--qa-data", key="qa_data", help="Local SQuAD / HotpotQA file for qa_1 / qa_2 (default: the hub)."
)
@shared.chat_template_option(
    _preset_option,
    "auto (the tokenizer's chat template when it has one), none, or a Jinja template file; the "
    "template's tokens count inside the length.",
)
@shared.bos_option(_preset_option, shared.BOS_IN_FRONT)
@_preset_option(
    "--length-counts",
    key="length_counts",
    type=click.Choice(LENGTH_COUNTS),
    help="What a length N holds: prompt+answer (RULER's: the prompt is N minus the task's answer budget), "
    "prompt (the prompt alone is N, the answer decoded past it; runs made before this option) or "
    "prompt+answer+thought (a thinking run's think budget counted in N too).  "
    "[default: prompt+answer]",
)
@_preset_option(
    "--threshold",
    key="threshold",
    type=float,
    help="Score the effective length must reach (RULER: 85.6, Llama-2-7B's average at 4k); with "
    "--samples auto, the score each cell's interval must clear or fall below to stop.",
)
@decoding_options(TASK, how=(REPLAY_OPTION,))
def ruler(preset, replay, decoding, **overrides):
    """RULER's synthetic long-context tasks at exact token lengths: scores per task and length, and the
    effective context length (RULER's, and ours from a 95 % lower bound).

    \b
    coca-eval ruler                                   # ruler-quick: SmolLM2-135M-Instruct at 1k and 2k
    coca-eval ruler --preset ruler --model DIR        # all thirteen tasks, 4k..128k, 500 samples
    coca-eval ruler --tasks niah_single_1,vt --lengths 4k,8k --samples 50 --chat-template none
    coca-eval ruler --replay LM_EVAL_OUTPUT --model DIR  # lm-eval's RULER prompts, answered here
    """
    from coca_eval.cli.evaluation import MethodOptions
    from coca_eval.cli.generation import evaluate_generation, print_console

    chosen = MethodOptions.take(overrides)
    params = replay_params(replay, overrides) if replay else ruler_params(preset, overrides)
    saved = evaluate_generation(TASK, params, chosen, preset, **decoding)
    if saved is None:  # a torchrun rank other than 0: rank 0 writes and prints
        return
    run, written = saved
    print_console(TASK, run, written, params)


def ruler_spec():
    """RULER's spec: the command reaches RULER's parameters and tables through the task registry."""
    from coca_eval.taskspec import TASKS

    return TASKS.get(TASK)  # registry look-up of RULER (its parameters, its console tables)


def ruler_params(preset: str, overrides: dict):
    from coca_eval.cli.preset_options import preset_values

    return ruler_spec().make_params(preset_values(preset, TASK, overrides))


def replay_params(folder: str, overrides: dict):
    """``--replay``'s parameters: lm-eval's, with the user's ``--threshold``."""
    return ruler_spec().make_params({**overrides, "replay": folder})
