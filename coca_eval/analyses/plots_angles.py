"""Angle plots: histograms of the initial angle Theta per layer (the anomalous half shaded) and the
anomalous share per layer and plane."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from coca_eval.analyses.plotting import ok_cells, stem, write
from coca_eval.analyses.records import AngleDetail
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def _histograms(ax, detail: AngleDetail) -> None:
    edges = np.asarray(detail.hist_edges)
    hist = np.asarray(detail.hist)  # (L, bins)
    shown = sorted({0, len(hist) // 2, len(hist) - 1})
    for layer in shown:
        total = max(hist[layer].sum(), 1)
        ax.stairs(hist[layer] / total, edges, label=f"layer {layer}")
    ax.axvspan(math.pi, 2 * math.pi, color="red", alpha=0.08, label="anomalous (Theta > pi)")
    ax.set(xlabel="initial angle Theta (rad)", ylabel="share of triples", title="Theta per layer")
    ax.legend(fontsize="x-small")


def _share_map(ax, detail: AngleDetail) -> None:
    image = ax.imshow(detail.share, aspect="auto", origin="lower", cmap="magma", vmin=0, vmax=1)
    ax.set(xlabel="frequency index (highest -> lowest)", ylabel="layer", title="anomalous share")
    ax.figure.colorbar(image, ax=ax, shrink=0.85)


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    plots = []
    for cell in ok_cells(cells):
        detail = AngleDetail.model_validate(cell.detail)
        fig = Figure(figsize=(11, 4), layout="constrained")
        left, right = fig.subplots(1, 2)
        _histograms(left, detail)
        _share_map(right, detail)
        fig.suptitle(
            f"{cell.method}: initial q-k angles, anomalous share {cell.value:.3f} ({cell.length} tokens)"
        )
        name = stem(context, "angles", cell.method, cell.length)
        plots.append(
            write(fig, context, name, f"Initial angles and CoCA §2.2 anomalous share, {cell.method}")
        )
    return plots
