"""BABILong's figure: tasks (rows) x lengths (columns), coloured by accuracy, as its paper and
leaderboard draw it, with each cell's 95 % interval written under its accuracy so a reader sees which
differences the samples can carry. One figure per method; an Average row closes it, as in the tables."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from coca_eval.lengths import format_length
from coca_eval.report.layout import safe_stem
from coca_eval.report.plots import default_plots, save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def accuracy_grid(cells: Sequence[Cell], tasks: Sequence[str], lengths: Sequence[int]) -> list[list[str]]:
    """Each (task, length) cell's label: accuracy and its interval, or the status of a cell that failed."""
    from coca_eval.generation.report import interval

    found = {(c.dataset, c.length): c for c in cells}
    labels = []
    for task in tasks:
        row = []
        for length in lengths:
            cell = found.get((task, length))
            if cell is None:
                row.append("")
            elif cell.status != "ok":
                row.append(cell.status)
            else:
                bounds = interval(cell)
                under = f"\n[{bounds[0]:.0f}, {bounds[1]:.0f}]" if bounds else ""
                row.append(f"{cell.value:.0f}{under}")
        labels.append(row)
    return labels


def task_heatmap(cells: Sequence[Cell], method: str, out_dir) -> Plot | None:
    """``method``'s tasks x lengths heat map with the average row; None without ok cells."""
    from coca_eval.babilong.report import task_order
    from coca_eval.generation.effective import length_scores

    mine = [c for c in cells if c.task == "babilong" and c.method == method]
    if not any(c.status == "ok" for c in mine):
        return None
    tasks, lengths = task_order(mine), sorted({c.length for c in mine})
    found = {(c.dataset, c.length): c for c in mine if c.status == "ok"}
    values = np.array(  # [tasks + 1, lengths]
        [[found[t, n].value if (t, n) in found else np.nan for n in lengths] for t in tasks]
        + [[s.average if s.average is not None else np.nan for s in length_scores(mine, tasks)]]
    )
    labels = [*accuracy_grid(mine, tasks, lengths), [f"{v:.0f}" if v == v else "" for v in values[-1]]]
    size = (max(4.5, 1.6 + 0.95 * len(lengths)), 1.1 + 0.55 * (len(tasks) + 1))
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for (row, column), text in np.ndenumerate(np.array(labels, dtype=object)):
        ax.text(column, row, text, ha="center", va="center", fontsize="x-small")
    ax.axhline(len(tasks) - 0.5, color="black", linewidth=1)
    ax.set_xticks(range(len(lengths)), [format_length(n) for n in lengths], fontsize="small")
    ax.set_yticks(range(len(tasks) + 1), [*tasks, "Average"], fontsize="small")
    fig.colorbar(image, ax=ax, label="accuracy")
    ax.set_title(f"{method}\nBABILong accuracy (95 % interval) by task and length", fontsize="small")
    stem = f"babilong_heatmap_{safe_stem(method)}"
    save(fig, out_dir, stem)
    return stem, f"{method}: BABILong accuracy by task and length, with 95 % intervals"


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    """The report's plots: accuracy against length per task, then each method's heat map."""
    plots = default_plots(cells, context)
    for method in dict.fromkeys(c.method for c in cells if c.task == "babilong"):
        plot = task_heatmap(cells, method, context.out_dir)
        if plot is not None:
            plots.append(plot)
    return plots
