"""MRCR's report figures: per method, the score over length for each needle count with every point's
95 % interval and the needle count's chance floor dashed, as the model cards draw MRCR; and the
depth x length heat map of the wanted needle (full credit counts as found)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from coca_eval.generation.heatmaps import depth_heatmaps
from coca_eval.report.layout import safe_stem
from coca_eval.report.plots import length_axis, save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext

DEPTH_BINS = 10


def curve_figure(method: str, cells: Sequence[Cell]) -> Figure:
    from coca_eval.mrcr.reading import chance_floor

    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.subplots()
    lengths = sorted({c.length for c in cells})
    for task in dict.fromkeys(c.dataset for c in cells):
        mine = sorted((c for c in cells if c.dataset == task and c.status == "ok"), key=lambda c: c.length)
        if not mine:
            continue
        xs, ys = [c.length for c in mine], [c.value for c in mine]
        low = [c.value - c.detail["interval95"][0] for c in mine]
        high = [c.detail["interval95"][1] - c.value for c in mine]
        line = ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=task)[0]
        floor = chance_floor(mine, task)
        if floor is not None:
            ax.axhline(floor, color=line.get_color(), linestyle="--", linewidth=0.8)
    length_axis(ax, lengths)
    ax.set_ylim(0, 100)
    ax.set_xlabel("Prompt length N (tokens)")
    ax.set_ylabel("MRCR score (x 100)")
    ax.set_title(f"{method}: MRCR by length (95 % intervals; dashed: chance floor)", fontsize="medium")
    ax.legend(fontsize="small")
    return fig


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    mine = [c for c in cells if c.task == "mrcr"]
    plots = []
    for method in dict.fromkeys(c.method for c in mine):
        stem = f"mrcr_curve_{safe_stem(method)}"
        save(curve_figure(method, [c for c in mine if c.method == method]), context.out_dir, stem)
        plots.append((stem, f"{method}: MRCR score by length per needle count"))
    return plots + depth_heatmaps(mine, context.out_dir, DEPTH_BINS, task="mrcr")
