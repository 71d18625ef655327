"""Length plots as the CoCA paper draws them: perplexity (Fig 1) and passkey accuracy vs length.

Figures are built with matplotlib's object API (no pyplot state, Agg rendering), written as PNG for
Markdown/HTML and SVG for papers, with fixed metadata so re-running a report does not churn the files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from coca_eval.lengths import format_length
from coca_eval.results import Cell
from coca_eval.tables import STATUS_TEXT, cell_grid

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "coca-eval"

Plot = tuple[str, str]  # (file stem, caption)


def save(fig: Figure, out_dir: Path, name: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / f"{name}.png", dpi=120, metadata={"Software": None})
    fig.savefig(out_dir / f"{name}.svg", metadata={"Date": None, "Creator": None})


def length_axis(ax: Axes, lengths: Sequence[int]) -> None:
    """Log2 x axis with a tick at every evaluated length, labelled the papers' way (512, 1k, 32k)."""
    ax.set_xscale("log", base=2)
    ax.set_xlim(min(lengths) / 1.25, max(lengths) * 1.25)  # also when a panel has nothing to draw
    ax.set_xticks(list(lengths), [format_length(n) for n in lengths])
    ax.minorticks_off()
    ax.grid(True, alpha=0.3)


def ppl_plots(
    cells: Sequence[Cell],
    out_dir: Path,
    stem: str = "ppl_vs_length",
    source: str | None = None,
    context_of: Callable[[str], int | None] | None = None,
) -> list[Plot]:
    """One Fig 1 style plot per dataset: a line per method, failed cells marked at the top edge, and a
    dotted line at each trained context ``context_of`` knows inside the plotted range (where
    extrapolation starts). ``source`` names where the numbers come from when they are not a run's."""
    plots = []
    datasets = list(dict.fromkeys(c.dataset for c in cells if c.task == "ppl" and c.length))
    for dataset in datasets:
        chosen = [c for c in cells if c.task == "ppl" and c.dataset == dataset and c.length]
        name = stem if len(datasets) == 1 else f"{stem}_{dataset}"
        where = source or dataset
        fig = Figure(figsize=(6.4, 4.2), layout="constrained")
        ax = fig.add_subplot()
        grid = cell_grid(chosen)
        for method in grid.rows:
            _method_line(ax, [grid.get(method, n) for n in grid.columns], grid.columns, method)
        values = [c.value for c in chosen if c.status == "ok"]
        if values and max(values) / min(values) > 20:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
        _mark_failures(ax, chosen)
        _mark_trained_contexts(ax, grid.rows, grid.columns, context_of)
        length_axis(ax, grid.columns)
        ax.set(xlabel="evaluation context window (tokens)", ylabel="perplexity (lower is better)")
        ax.set_title(f"Sliding-window perplexity, {where}")
        ax.legend(fontsize="small", loc="best")
        save(fig, out_dir, name)
        plots.append((name, f"Perplexity vs evaluation length, {where} (log2 length axis)"))
    return plots


def _mark_trained_contexts(
    ax: Axes, methods: Sequence[str], lengths: Sequence[int], context_of: Callable[[str], int | None] | None
) -> None:
    contexts = {context_of(m) for m in methods} if context_of else set()
    for context in sorted(c for c in contexts if c and min(lengths) < c < max(lengths) * 1.25):
        ax.axvline(context, color="grey", linestyle=":", label=f"trained context ({format_length(context)})")


def passkey_accuracy_plot(
    cells: Sequence[Cell], out_dir: Path, stem: str = "passkey_vs_length", source: str | None = None
) -> list[Plot]:
    """Accuracy per method vs prompt length, with the Wilson 95 % band each cell records."""
    chosen = [c for c in cells if c.task == "passkey" and c.length]
    if not chosen:
        return []
    grid = cell_grid(chosen)
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for method in grid.rows:
        row = [grid.get(method, n) for n in grid.columns]
        line = _method_line(ax, row, grid.columns, method)
        band = [
            (n, c.detail["wilson95"])
            for n, c in zip(grid.columns, row, strict=True)
            if _ok(c) and "wilson95" in c.detail
        ]
        if band and line is not None:
            xs, bounds = zip(*band, strict=True)
            ax.fill_between(
                xs, [b[0] for b in bounds], [b[1] for b in bounds], alpha=0.15, color=line.get_color()
            )
    _mark_failures(ax, chosen)
    length_axis(ax, grid.columns)
    ax.set_ylim(-0.02, 1.05)
    ax.set(xlabel="prompt length (tokens)", ylabel="passkey accuracy")
    ax.set_title(f"Passkey retrieval, {source}" if source else "Passkey retrieval (band: Wilson 95 %)")
    ax.legend(fontsize="small", loc="best")
    save(fig, out_dir, stem)
    caption = (
        f"Passkey accuracy vs prompt length, {source}" if source else "Passkey accuracy vs prompt length"
    )
    return [(stem, caption + ("" if source else ", Wilson 95 % band"))]


def _method_line(ax: Axes, row: Sequence[Cell | None], lengths: Sequence[int], label: str):
    points = [(n, c.value) for n, c in zip(lengths, row, strict=True) if _ok(c)]
    if not points:
        return None
    xs, ys = zip(*points, strict=True)
    (line,) = ax.plot(xs, ys, marker="o", label=label)
    return line


def _mark_failures(ax: Axes, cells: Sequence[Cell]) -> None:
    """``OOM`` / ``inf`` cells have no value to draw; the paper prints the word, so the plot does too:
    a marker on the top edge in the method's colour, the words stacked below it inside the axes."""
    colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
    edge, stacked = ax.get_xaxis_transform(), {}  # x in data, y in axes fractions
    for cell in (c for c in cells if c.status != "ok"):
        colour = colours.get(cell.method, "red")
        level = stacked[cell.length] = stacked.get(cell.length, -1) + 1
        ax.plot([cell.length], [1.0], marker="v", color=colour, transform=edge, clip_on=False)
        ax.text(cell.length, 0.95 - 0.045 * level, STATUS_TEXT[cell.status], transform=edge, ha="center",
                va="top", fontsize="x-small", color=colour)  # fmt: skip


def _ok(cell: Cell | None) -> bool:
    return cell is not None and cell.status == "ok" and math.isfinite(cell.value)
