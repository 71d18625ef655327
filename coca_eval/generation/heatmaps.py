"""Where retrieval fails: needle depth x length heat maps, one panel per task that records depths, one
figure per method. Every needle counts once: its depth (fraction of the prompt where it starts) and
whether the output held its value, so a multi-value sample fills several depths."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from coca_eval.lengths import format_length
from coca_eval.report.layout import safe_stem
from coca_eval.report.plots import save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot

Needles = list[tuple[int, float, bool]]  # (prompt length, needle depth, found)


def needles_by_task(cells: Sequence[Cell], method: str, task: str = "ruler") -> dict[str, Needles]:
    """Dataset -> every needle of ``method``'s ok cells of ``task`` that kept depths. A sample with one
    depth and no ``found`` (HELMET's gold pair or passage) counts as found when it earned full credit."""
    found: dict[str, Needles] = {}
    for cell in cells:
        if cell.task != task or cell.method != method or cell.status != "ok" or cell.length is None:
            continue
        for sample in cell.detail.get("samples") or []:
            depths, hits = sample.get("depths"), sample.get("found")
            if depths and hits is None and len(depths) == 1:
                hits = [float(sample["score"]) == 1.0]
            if depths and hits and len(depths) == len(hits):
                rows = found.setdefault(cell.dataset, [])
                rows.extend((cell.length, float(d), bool(h)) for d, h in zip(depths, hits, strict=True))
    return found


def depth_matrix(needles: Needles, lengths: Sequence[int], bins: int) -> np.ndarray:
    """``[bins, lengths]`` share of needles found by depth (row 0 = start of the prompt); NaN where none."""
    hits, total = np.zeros((bins, len(lengths))), np.zeros((bins, len(lengths)))
    for length, depth, hit in needles:
        row = min(int(depth * bins), bins - 1)
        hits[row, lengths.index(length)] += hit
        total[row, lengths.index(length)] += 1
    return np.divide(hits, total, out=np.full_like(hits, np.nan), where=total > 0)


def depth_heatmaps(cells: Sequence[Cell], out_dir, bins: int, task: str = "ruler") -> list[Plot]:
    """One figure per method, a panel per dataset with depths: needle (or answering unit) depth x
    length, colour = share found."""
    plots = []
    for method in dict.fromkeys(c.method for c in cells if c.task == task):
        tasks = needles_by_task(cells, method, task)
        if not tasks:
            continue
        stem = f"{task}_depth_heatmap_{safe_stem(method)}"
        save(depth_figure(method, tasks, bins), out_dir, stem)
        what = {"ruler": "RULER needles"}.get(task, f"{task.upper()} needles and answering units")
        plots.append((stem, f"{method}: {what} found by depth ({bins} bins) and prompt length"))
    return plots


def depth_figure(method: str, tasks: dict[str, Needles], bins: int) -> Figure:
    """``method``'s heat maps, a panel per dataset, sized from the lengths and then widened until every
    title and label lies inside the figure (one length alone makes panels too narrow for the title)."""
    lengths = sorted({n for rows in tasks.values() for n, _, _ in rows})
    columns = min(4, len(tasks))
    grid = (math.ceil(len(tasks) / columns), columns)
    fig = Figure(figsize=(1.5 + 0.9 * len(lengths) * columns, 3.2 * grid[0]), layout="constrained")
    axes = fig.subplots(*grid, squeeze=False).ravel()
    for ax, (dataset, needles) in zip(axes, tasks.items(), strict=False):
        image = ax.imshow(depth_matrix(needles, lengths, bins), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(len(lengths)), [format_length(n) for n in lengths], fontsize="x-small")
        ax.set_yticks(range(bins), [f"{(t + 0.5) / bins:.2f}" for t in range(bins)], fontsize="xx-small")
        ax.set_title(dataset, fontsize="small")
    for ax in axes[len(tasks) :]:
        ax.set_axis_off()
    fig.colorbar(image, ax=list(axes), label="needles found")
    fig.suptitle(f"{method}: needle depth (rows, fraction of the prompt) x prompt length")
    fit_width(fig)
    return fig


def fit_width(fig: Figure, margin: float = 0.15) -> None:
    """Widen ``fig`` (inches) until everything drawn lies inside it: the constrained layout fits the
    panels to the figure, but a title wider than the figure is cut at both edges, whatever the layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    for _ in range(4):  # the layout moves text as the width changes; two rounds settle it
        fig.draw_without_rendering()
        drawn = fig.get_tightbbox(renderer)  # inches
        overflow = max(0.0, -drawn.x0) + max(0.0, drawn.x1 - fig.get_figwidth())
        if overflow <= 0:
            return
        fig.set_figwidth(fig.get_figwidth() + overflow + margin)
        renderer = fig.canvas.get_renderer()
