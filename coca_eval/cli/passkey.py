"""``coca-eval passkey``: retrieval accuracy at exact token lengths (the paper's Table 2)."""

from __future__ import annotations

from pathlib import Path

import click

from coca_eval.cli import generation_options as shared
from coca_eval.cli.generation import decoding_options
from coca_eval.cli.options import RegistryChoice
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory
from coca_eval.passkey.params import DYNAMIC_ROPE_CHOICES
from coca_eval.passkey.templates import TEMPLATES
from coca_eval.presets import default_preset

PRESET = default_preset("passkey", fallback="passkey-quick")

_preset_option = preset_option_factory(PRESET, "passkey")


@click.command()
@preset_choice_option(PRESET)
@shared.lengths_option(_preset_option, "Prompt lengths in tokens: 512..32k, 512,1024 or 1k..8k.")
@shared.samples_option(
    _preset_option,
    "Samples per length (the paper uses 100), or auto: rounds until --target-width or --threshold.",
)
@shared.max_samples_option(_preset_option, "With --samples auto: the most samples per length.")
@shared.target_width_option(
    _preset_option,
    "With --samples auto: stop a length once its 95 % interval is narrower than this, in (0, 1).",
)
@_preset_option(
    "--threshold",
    key="threshold",
    type=float,
    help="With --samples auto: stop a length once its 95 % interval lies wholly above or below this.",
)
@shared.seed_option(_preset_option, "Seed of keys and depths (same samples for every method).")
@_preset_option(
    "--max-new-tokens",
    key="max_new_tokens",
    type=int,
    help="Greedy tokens at most (paper: 64); stops once decided.",
)
@_preset_option(
    "--depths", key="depths", help="stratified | random | comma list of fractions, e.g. 0,0.25,0.5,0.75,1."
)
@_preset_option("--template", key="template", type=RegistryChoice(TEMPLATES), help="Prompt wording.")
@shared.bos_option(_preset_option, shared.BOS_IN_FRONT)
@_preset_option(
    "--dynamic-rope",
    key="dynamic_rope",
    type=click.Choice(DYNAMIC_ROPE_CHOICES),
    help="Dynamic rope scaling in the answer: rescale per token (transformers) or hold the prompt's (vLLM).",
)
@shared.chat_template_option(
    _preset_option,
    "preset (the model preset's choice: smollm2-135m reads through its template, other models "
    "do not), auto (the tokenizer's template when it has one), none, or a Jinja template file. With a "
    "template, 'The pass key is' opens the assistant's turn; its tokens count inside the length.  "
    "[default: preset]",
)
@click.option(
    "--dump-samples",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every sample (prompt ids, key, depth, distance, output, correct) as JSONL.",
)
@decoding_options("passkey")
def passkey(preset, dump_samples, decoding, **overrides):
    """Passkey retrieval at exact token lengths: accuracy per methods x lengths (the paper's Table 2).

    Samples of one length share their filler prefix, which is prefilled once (see --no-prefix-reuse),
    and their answers are decoded together, --batch-size rows at a time.
    """
    from coca_eval.cli.generation import refuse_error_cells, run_family
    from coca_eval.cli.output import print_length_table

    saved = run_family("passkey", preset, overrides, dump_samples=dump_samples, **decoding)
    if saved is None:  # a torchrun rank other than 0: rank 0 writes and prints
        return
    run, written, params = saved
    rule = params.stopping_rule()
    spent = f"{params.samples} samples per length" if rule is None else f"per length {rule.caption()}"
    heading = (
        f"[bold]Passkey accuracy[/bold], {spent}, template {params.template}, "
        f"greedy <= {params.max_new_tokens} tokens"
        + ("" if params.bos == "auto" else f", BOS {params.bos}")
        + ("" if params.dynamic_rope == "rescale" else ", dynamic rope held through the answer")
        + ("" if params.chat_template == "preset" else f", chat template {params.chat_template}")
    )
    print_length_table(run, heading, 2, written)
    if not any(cell.status == "partial" for cell in run.cells):  # a shard's cells are not finished yet
        refuse_error_cells(run)
