"""RULER's plots: where retrieval fails in its needle tasks (the base's depth x length heat maps)."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.generation.heatmaps import depth_heatmaps
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    """The report's plot hook: the needle heat maps of a run's own cells (a paper's numbers have none)."""
    if context.source is not None:
        return []
    return depth_heatmaps(cells, context.out_dir, context.definition.depth_bins)
