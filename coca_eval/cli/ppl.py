"""``coca-eval ppl``: sliding-window perplexity, one methods x lengths table (the paper's Table 1)."""

from __future__ import annotations

import click

from coca_eval.cli.longppl import longppl_options
from coca_eval.cli.options import method_options
from coca_eval.cli.preset_options import preset_choice_option, preset_option_factory
from coca_eval.data.sources import known_sources
from coca_eval.ppl.params import BOS_CHOICES, MODES
from coca_eval.presets import default_preset

PRESET = default_preset("ppl", fallback="embedded")

_preset_option = preset_option_factory(PRESET, "ppl")


@click.command()
@preset_choice_option(PRESET)
@_preset_option(
    "--dataset",
    key="dataset",
    help=lambda: f"{known_sources()}.",  # read when shown: a plug-in's forms are listed too
)
@_preset_option(
    "--num-docs", key="num_docs", type=int, help="Documents to sample (each must have >= --doc-tokens)."
)
@_preset_option("--doc-tokens", key="doc_tokens", type=int, help="Tokens kept per document.")
@_preset_option(
    "--lengths", key="lengths", help="Window lengths: 512..32k (powers of two), 512,1024,4096 or 1k..8k."
)
@_preset_option("--stride", key="stride", type=int, help="Sliding stride S; S >= L means disjoint windows.")
@_preset_option("--mode", key="mode", type=click.Choice(MODES), help="truncated: first L tokens only.")
@_preset_option("--bos", key="bos", type=click.Choice(BOS_CHOICES), help="BOS per window.")
@_preset_option("--seed", key="seed", type=int, help="Document sampling seed.")
@click.option("--limit", type=int, help="Evaluate only the first N sampled documents (quick checks).")
@_preset_option("--text-field", key="text_field", help="Text field of .jsonl/.parquet/hub rows.")
@method_options(
    output_help="Write the results JSON here (its journal beside it: rerun the same command to resume). "
    "Default: runs/ppl-TIMESTAMP.json.",
    batch_help="Windows per forward pass.",
    journaled=True,
    splits=True,
)
@longppl_options
def ppl(preset, batch_size, **overrides):
    """Sliding-window perplexity: one methods x lengths table (the paper's Table 1)."""
    from coca_eval.cli.evaluation import MethodOptions, evaluate_and_save
    from coca_eval.cli.longppl import pop_longppl_options, run_longppl
    from coca_eval.cli.options import check_batch_size
    from coca_eval.cli.output import print_length_table
    from coca_eval.cli.ppl_documents import fewer_documents_note, too_few_documents
    from coca_eval.cli.preset_options import value_origins
    from coca_eval.data.sampling import TooFewDocuments
    from coca_eval.errors import CocaEvalError
    from coca_eval.ppl.params import make_params
    from coca_eval.ppl.report import windows_caption

    chosen = MethodOptions.take(overrides)
    longppl = pop_longppl_options(overrides)
    if longppl is not None:
        return run_longppl(cli_values(preset, overrides), overrides, longppl, chosen, batch_size, preset)
    params = make_params(cli_values(preset, overrides))
    origins = value_origins(preset, "ppl", overrides)
    check_batch_size(batch_size)
    try:
        saved = evaluate_and_save("ppl", params, chosen, preset, batch_size=batch_size)
    except TooFewDocuments as exc:
        raise CocaEvalError(too_few_documents(exc, params, origins)) from None
    if saved is None:  # a torchrun rank other than 0: rank 0 writes and prints
        return
    run, written = saved
    docs = max(len(c.detail.get("docs", [])) for c in run.cells)
    heading = (
        f"[bold]Perplexity[/bold], {params.dataset}: {docs} docs x {params.doc_tokens} tokens, "
        f"{windows_caption(params.identity(), list(params.lengths))}, BOS {params.bos}"
    )
    print_length_table(run, heading, 2, written, fewer_documents_note(run, params, origins))


def cli_values(preset: str, overrides: dict) -> dict:
    """The preset overlaid with the options given. A dataset named without ``--num-docs`` makes the
    preset's count a ceiling: the user's own file (one book, say) need not hold as many qualifying
    documents as the preset's protocol draws from its corpus."""
    from coca_eval.cli.preset_options import preset_values

    values = preset_values(preset, "ppl", overrides)
    named = overrides.get("dataset") is not None and overrides.get("num_docs") is None
    if named and values.get("num_docs") is not None:
        values["up_to_num_docs"] = True
    return values
