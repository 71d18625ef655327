"""``coca-eval ppl --metric longppl``: the options and the run, kept apart from the ppl command so that
command needs only a decorator and two lines to offer them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from coca_eval.ppl.longppl.params import METRICS

if TYPE_CHECKING:
    from coca_eval.cli.evaluation import MethodOptions

# The key-token rule's options in --help order: (option, LongPplParams field, type, help). One table
# declares each option and names the field its value fills, so the two cannot drift apart.
_RULE_OPTIONS = (
    (
        "--evaluator-model",
        "evaluator_model",
        None,
        "longppl: the model that picks the key tokens (default: each evaluated model itself); its "
        "tokenizer may differ (tokens are matched through character offsets).",
    ),
    ("--longppl-short", "short", int, "longppl: the short context in tokens [4096]."),
    ("--longppl-step", "step", int, "longppl: tokens sharing one short context [1024]."),
    ("--longppl-bound", "bound", float, "longppl: key tokens' full-context loss is below [2.0]."),
    ("--longppl-margin", "margin", float, "longppl: key tokens' loss rises by more than this [2.0]."),
    (
        "--key-tokens",
        "key_tokens",
        click.Path(exists=True, dir_okay=False),
        "longppl: score on the key tokens stored in this earlier longppl results file.",
    ),
)
# option's parameter name -> LongPplParams field
_FIELDS = {option[2:].replace("-", "_"): field for option, field, _, _ in _RULE_OPTIONS}


def longppl_options(command):
    """``--metric`` and the key-token rule's options (the paper's defaults apply when not given)."""
    from coca_eval.cli.options import with_options

    metric = click.option(
        "--metric",
        type=click.Choice(METRICS),
        default="ppl",
        show_default=True,
        help="longppl: perplexity on the key tokens only (Fang et al., ICLR 2025), each document's "
        "first L tokens read in one window.",
    )
    rule = [click.option(option, type=kind, help=text) for option, _, kind, text in _RULE_OPTIONS]
    return with_options(command, [metric, *rule])


def pop_longppl_options(overrides: dict) -> dict | None:
    """Take the longppl options out of ``overrides``: their values (as LongPplParams fields) for
    ``--metric longppl``, None for ``--metric ppl`` (where giving one is refused)."""
    from coca_eval.errors import CocaEvalError

    metric = overrides.pop("metric", "ppl")
    given = {field: overrides.pop(option, None) for option, field in _FIELDS.items()}
    given = {field: value for field, value in given.items() if value is not None}
    if metric == "longppl":
        return given
    if given:
        names = ", ".join(f"--{o.replace('_', '-')}" for o, f in _FIELDS.items() if f in given)
        raise CocaEvalError(f"{names} only apply with --metric longppl")
    return None


def run_longppl(
    values: dict, overrides: dict, longppl: dict, chosen: MethodOptions, batch_size: int, preset: str
) -> None:
    """The ppl command's run with LongPPL cells: ``values`` are the ppl command's preset and options."""
    from coca_eval.cli.evaluation import evaluate_and_save
    from coca_eval.cli.options import check_batch_size
    from coca_eval.cli.output import print_length_table
    from coca_eval.cli.ppl_documents import fewer_documents_note, too_few_documents
    from coca_eval.cli.preset_options import value_origins
    from coca_eval.data.sampling import TooFewDocuments
    from coca_eval.errors import CocaEvalError
    from coca_eval.ppl.longppl.params import longppl_values, make_longppl_params

    params = make_longppl_params({**longppl_values(values, overrides), **longppl})
    origins = value_origins(preset, "ppl", overrides)
    check_batch_size(batch_size)
    try:
        saved = evaluate_and_save("longppl", params, chosen, preset, "ppl", batch_size=batch_size)
    except TooFewDocuments as exc:
        raise CocaEvalError(too_few_documents(exc, params, origins)) from None
    if saved is None:
        return
    run, written = saved
    docs = max(len(c.detail.get("docs", [])) for c in run.cells)
    judge = params.evaluator_model or "each evaluated model"
    source = f"key tokens from {params.key_tokens}" if params.key_tokens else f"key tokens judged by {judge}"
    heading = (
        f"[bold]LongPPL[/bold], {params.dataset}: {docs} docs, first L tokens in one window, "
        f"BOS {params.bos}; "
        f"{source} (short {params.short}, step {params.step}, loss < {params.bound}, gain > {params.margin})"
    )
    print_length_table(run, heading, 2, written, fewer_documents_note(run, params, origins))
