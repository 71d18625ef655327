"""``coca-eval longbench``: LongBench v1's tasks (``--version 1``) or v2's multiple-choice questions
(``--version 2``, the ``longbench_v2`` task) on real documents, by LongBench's own protocol or at exact
lengths. A preset of either task chooses its version."""

from __future__ import annotations

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import FROM_SCRATCH_SHORT, decoding_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory

PRESET, PRESET_V2 = "longbench-quick", "longbench-v2-quick"
TASK, TASK_V2 = "longbench", "longbench_v2"

_preset_option = preset_option_factory(PRESET, TASK)


@click.command()
@preset_choice_option(PRESET, eager=False)
@click.option(
    "--version", "version", type=click.Choice(["1", "2"]), default=None,
    help="LongBench v1 (21 tasks; the default) or v2 (503 questions, six domains; preset "
    f"{PRESET_V2}). A preset of v2 chooses 2.",
)  # fmt: skip
@_preset_option(
    "--tasks", key="tasks", help="LongBench's task names, comma-separated (narrativeqa, ...; v2: its "
    "domains, single_document_qa, ...).",
)  # fmt: skip
@shared.published_set_options(
    _preset_option,
    ("exact", "longbench"),
    protocol="exact: every prompt N minus the answer budget, rows shorter left out of that N; longbench: "
    "pred.py's prompts, each length its max_length (middle cut), the answer past it.",
    per_length="Rows per task and length, or auto.",
    seed="Seed of --samples auto's visiting order.",
    data="hub (THUDM/LongBench, v2: THUDM/LongBench-v2), smoke (the smoke set shipped here), or a folder "
    "holding data/<task>.jsonl (or LongBench's data.zip); v2: data.json.",
)
@_preset_option(
    "--subset", key="subset", type=click.Choice(("full", "e")), help="v1: full, or e: LongBench-E's files."
)
@_preset_option(
    "--context", key="context", type=click.Choice(("document", "none")),
    help="v2: the document, or none: the question alone (v2's w/o context baseline; --protocol longbench).",
)  # fmt: skip
@_preset_option(
    "--cot/--no-cot", key="cot", default=None,
    help="v2: chain of thought as v2's pred.py asks it (1,024 tokens of reasoning, then the answer).",
)  # fmt: skip
@shared.chat_template_option(
    _preset_option,
    "auto (the tokenizer's), none, or a Jinja file; never on the tasks pred.py runs without one.",
)
@shared.bos_option(_preset_option, "BOS (exact): auto, always, never.")
@shared.share_option(_preset_option)
@decoding_options(TASK, FROM_SCRATCH_SHORT)
def longbench(preset, version, decoding, **overrides):
    """LongBench v1: 21 tasks on real documents (single- and multi-document QA, summaries, few-shot,
    synthetic, code), English and Chinese, scored by LongBench's own metrics, with its category
    averages. LongBench v2 (--version 2): multiple-choice questions on documents of 8k to 2M words,
    with its table by difficulty and length class.

    \b
    coca-eval longbench                    # longbench-quick: smoke set, SmolLM2-135M-Instruct, 1k, 2k
    coca-eval longbench --preset longbench --model DIR --data hub
    coca-eval longbench --model DIR --data DIR --lengths 8k..128k
    coca-eval longbench --version 2        # longbench-v2-quick: v2's smoke set
    coca-eval longbench --preset longbench-v2 --model DIR --data hub
    """
    from coca_eval.cli.generation import print_console, run_family

    task, preset = _version(version, preset, overrides)
    saved = run_family(task, preset, overrides, **decoding)
    if saved is not None:  # None on a torchrun rank other than 0: rank 0 writes and prints
        print_console(task, *saved)


def _version(version: str | None, preset: str, overrides: dict) -> tuple[str, str]:
    """The task and preset ``--version`` and ``--preset`` choose; an option of the other version is
    refused in one line (it would change nothing)."""
    from click.core import ParameterSource

    from coca_eval.errors import CocaEvalError
    from coca_eval.presets import get_preset

    chosen = click.get_current_context().get_parameter_source("preset") != ParameterSource.DEFAULT
    if version is None:
        version = "2" if chosen and get_preset(preset).task == TASK_V2 else "1"
    if version == "2" and not chosen:
        preset = PRESET_V2
    task = TASK_V2 if version == "2" else TASK
    others = ("subset",) if task == TASK_V2 else ("context", "cot")
    for other in others:
        if overrides.pop(other, None) is not None:
            raise CocaEvalError(f"--{other} is LongBench {'v1' if other == 'subset' else 'v2'}'s option")
    return task, preset
