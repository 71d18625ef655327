"""Decay plots: the closed forms (RoFormer vs CoCA bounds; all-ones, Gaussian, random positions) and
the model's measured mean logit against distance, one figure per (method, length)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from coca_eval.analyses.plotting import ok_cells, stem, write
from coca_eval.analyses.records import DecayDetail
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def _closed_forms(ax, detail: DecayDetail) -> None:
    x = np.asarray(detail.distances)
    keep = x >= 1  # a log axis: distance 0 (every curve at its maximum) is left out
    x = x[keep]
    for geometry in detail.geometries:
        tag = f" (layers {geometry.layers[0]}..)" if len(detail.geometries) > 1 else ""
        ax.plot(x, np.asarray(geometry.roformer)[keep], label=f"RoFormer bound{tag}")
        ax.plot(x, np.asarray(geometry.coca)[keep], label=f"CoCA bound{tag}", linestyle="--")
        ax.plot(x, np.asarray(geometry.all_ones)[keep], label=f"all-ones q,k{tag}", alpha=0.8)
        ax.plot(x, np.asarray(geometry.gaussian)[keep], label=f"Gaussian q,k{tag}", alpha=0.8)
        ax.plot(
            x,
            np.asarray(geometry.random_positions)[keep],
            label=f"all-ones, random positions L={geometry.random_bound}{tag}",
            alpha=0.8,
        )
    ax.set(xscale="log", xlabel="relative distance", ylabel="relative value", title="closed forms")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")


def _measured(ax, detail: DecayDetail) -> None:
    edges = np.asarray(detail.edges)
    keep = edges[:-1] >= 1  # the log axis starts at distance 1
    x = edges[:-1][keep]
    for row in detail.measured:
        ax.plot(x, np.asarray(row)[keep], color="grey", alpha=0.25, linewidth=0.8)
    ax.plot(x, np.asarray(detail.measured_mean)[keep], color="black", label="mean over layers")
    ax.set(xscale="log", xlabel="relative distance (bin start)", ylabel="mean logit", title="measured")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="x-small")


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    plots = []
    for cell in ok_cells(cells):
        detail = DecayDetail.model_validate(cell.detail)
        measured = bool(detail.measured)  # a model-free run (--head-dim) has the closed forms alone
        fig = Figure(figsize=(11 if measured else 6, 4.2), layout="constrained")
        axes = fig.subplots(1, 2 if measured else 1, squeeze=False)[0]
        _closed_forms(axes[0], detail)
        if measured:
            _measured(axes[1], detail)
        fig.suptitle(f"{cell.method}: long-term decay, {cell.length} tokens")
        name = stem(context, "decay", cell.method, cell.length)
        plots.append(
            write(
                fig,
                context,
                name,
                f"Decay, {cell.method} at {cell.length} tokens: closed forms"
                + (" (left), measured logit by distance (right)" if measured else ""),
            )
        )
    return plots
