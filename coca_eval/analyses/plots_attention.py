"""Attention plots: per layer, the largest logit over heads and the mean local mass, against length
(one line per method, as CoCA v1 Fig 8 contrasts RoFormer with CoCA)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from coca_eval.analyses.plotting import ok_cells, stem, write
from coca_eval.analyses.records import AttentionDetail
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def _per_layer(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    plots = []
    for method in dict.fromkeys(c.method for c in cells):
        mine = sorted((c for c in cells if c.method == method), key=lambda c: c.length)
        fig = Figure(figsize=(11, 4), layout="constrained")
        left, right = fig.subplots(1, 2)
        for cell in mine:
            detail = AttentionDetail.model_validate(cell.detail)
            layers = range(len(detail.max_logit))
            left.plot(layers, np.max(detail.max_logit, axis=1), marker="o", label=f"{cell.length} tokens")
            right.plot(layers, np.mean(detail.near_mass, axis=1), marker="o", label=f"{cell.length} tokens")
        left.set(xlabel="layer", ylabel="max logit over heads", title="largest attention logit")
        near = AttentionDetail.model_validate(mine[0].detail).near
        right.set(
            xlabel="layer",
            ylabel=f"mass on {near} nearest keys",
            title="local attention mass",
            ylim=(0, 1.02),
        )
        for ax in (left, right):
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize="x-small")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        fig.suptitle(f"{method}: attention past the trained length")
        name = stem(context, "attention", method)
        plots.append(
            write(fig, context, name, f"Attention logits and local mass per layer by length, {method}")
        )
    return plots


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    return _per_layer(ok_cells(cells), context)
