"""Figure helpers shared by the analyses' plot hooks (matplotlib's object API, as the report's plots)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from coca_eval.report.layout import safe_stem
from coca_eval.report.plots import save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def ok_cells(cells: Sequence[Cell]) -> list[Cell]:
    return [c for c in cells if c.status == "ok"]


def stem(context: PlotContext, *parts: object) -> str:
    return safe_stem("_".join(str(p) for p in (context.stem, *parts) if p not in (None, "")))


def write(fig: Figure, context: PlotContext, name: str, caption: str) -> Plot:
    save(fig, context.out_dir, name)
    return name, caption


def heatmap(ax, matrix, ylabel: str, title: str, colorbar: bool = True):
    """Rows (layers or heads) against plane index, highest frequency on the left (Fig 3, 4, 10)."""
    image = ax.imshow(matrix, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest")
    ax.set(xlabel="frequency index (highest -> lowest)", ylabel=ylabel, title=title)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.85, label="mean 2-norm")
    return image
