"""Fig 1 of the CoCA paper: perplexity vs evaluation length, one plot per dataset."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from coca_eval.report.plots import default_plots, finish_plot, length_plot, log_scale_when_wide, spans_lengths
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def ppl_plots(
    cells: Sequence[Cell],
    out_dir: Path,
    stem: str = "ppl_vs_length",
    source: str | None = None,
    context_of: Callable[[str], int | None] | None = None,
) -> list[Plot]:
    """A line per method, failed cells marked at the top edge, the trained contexts dotted. ``source``
    names where the numbers come from when they are not a run's (a paper table). A dataset read at one
    length has no curve to draw (its table holds the values): it gets no plot."""
    plots = []
    datasets = [d for d in dict.fromkeys(c.dataset for c in cells if c.length) if spans_lengths(cells, d)]
    for dataset in datasets:
        chosen = [c for c in cells if c.dataset == dataset and c.length]
        name = stem if len(datasets) == 1 else f"{stem}_{dataset}"
        where = source or dataset
        ax = length_plot(
            chosen,
            f"Perplexity vs context window, {where}",
            "perplexity (lower is better)",
            "evaluation context window (tokens)",
            context_of,
        )
        log_scale_when_wide(ax, chosen)
        finish_plot(ax, out_dir, name)
        plots.append((name, f"Perplexity vs evaluation length, {where} (log2 length axis)"))
    return plots


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    """The report's plot hook (cells are this task's only)."""
    ppl_cells = [c for c in cells if c.metric == "ppl"]
    stem = context.stem or "ppl_vs_length"
    plots = ppl_plots(ppl_cells, context.out_dir, stem, context.source, context.context_of)
    if context.source is None:  # a run's cells (a paper's numbers have no documents)
        from coca_eval.ppl.position_plot import position_plots

        plots += position_plots(ppl_cells, context.out_dir, context.context_of)
    return plots + default_plots([c for c in cells if c.metric != "ppl"], context)  # --metric bpb
