"""Frequency-usage plots laid out like the p-RoPE paper's: layers x planes heat maps of q, k and v
(Fig 3, 10), heads x planes of chosen layers (Fig 4), and the per-layer quarter shares."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from coca_eval.analyses.plotting import heatmap, ok_cells, stem, write
from coca_eval.analyses.records import FrequencyDetail
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def _layer_maps(cell: Cell, detail: FrequencyDetail, context: PlotContext) -> Plot:
    fig = Figure(figsize=(13, 4), layout="constrained")
    key_name = "t (CoCA coefficients)" if detail.collinear else "keys"
    for ax, (matrix, title) in zip(
        fig.subplots(1, 3),
        ((detail.layers.q, "queries"), (detail.layers.k, key_name), (detail.layers.v, "values (no RoPE)")),
        strict=True,
    ):
        heatmap(ax, matrix, "layer", title)
    fig.suptitle(f"{cell.method}: mean 2-norm per RoPE plane, mean over heads ({cell.length} tokens)")
    name = stem(context, "frequencies", cell.method, cell.length, "layers")
    return write(fig, context, name, f"Frequency usage per layer, {cell.method} (cf. p-RoPE paper Fig 3, 10)")


def _head_maps(cell: Cell, detail: FrequencyDetail, context: PlotContext, layer: str) -> Plot:
    maps = detail.heads[layer]
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    for ax, (matrix, title) in zip(fig.subplots(1, 2), ((maps.q, "queries"), (maps.k, "keys")), strict=True):
        heatmap(ax, matrix, "head (keys: kv head)", title)
    fig.suptitle(f"{cell.method}: layer {layer}, per head")
    name = stem(context, "frequencies", cell.method, cell.length, "layer", layer)
    return write(fig, context, name, f"Frequency usage per head of layer {layer}, {cell.method} (cf. Fig 4)")


def _shares(cell: Cell, detail: FrequencyDetail, context: PlotContext) -> Plot:
    fig = Figure(figsize=(6.4, 4), layout="constrained")
    ax = fig.add_subplot()
    shares = detail.shares
    for values, label in (
        (shares.q_low, "q, lowest quarter"),
        (shares.k_low, "k, lowest quarter"),
        (shares.q_high, "q, highest quarter"),
        (shares.k_high, "k, highest quarter"),
    ):
        ax.plot(range(len(values)), values, marker="o", label=label)
    ax.axhline(0.25, color="grey", linestyle=":", label="uniform (0.25)")
    ax.set(xlabel="layer", ylabel="share of summed plane norms", title=f"{cell.method}: quarter shares")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    name = stem(context, "frequencies", cell.method, cell.length, "shares")
    return write(
        fig,
        context,
        name,
        f"Share of the q/k norm in the lowest and highest frequency quarter, {cell.method}",
    )


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    plots = []
    for cell in ok_cells(cells):
        detail = FrequencyDetail.model_validate(cell.detail)
        plots += [_layer_maps(cell, detail, context), _shares(cell, detail, context)]
        plots += [_head_maps(cell, detail, context, layer) for layer in detail.heads]
    return plots
