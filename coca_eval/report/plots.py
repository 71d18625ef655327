"""Length plots as the CoCA paper draws them (metric vs a log2 length axis), shared by every task.

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
from coca_eval.report.layout import safe_stem
from coca_eval.results import Cell
from coca_eval.tables import STATUS_TEXT, cell_grid
from coca_eval.taskspec import Plot, PlotContext

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "coca-eval"


def save(fig: Figure, out_dir: Path, name: str) -> None:
    """Under ``out_dir`` whatever the name (see :func:`safe_stem`; the report links the same stem)."""
    name = safe_stem(name)
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


def length_plot(
    cells: Sequence[Cell],
    title: str,
    ylabel: str,
    xlabel: str = "evaluation length (tokens)",
    context_of: Callable[[str], int | None] | None = None,
) -> Axes:
    """A line per method over a log2 length axis, failed cells marked at the top edge and a dotted line
    at each trained context ``context_of`` knows (where extrapolation starts); the caller may add to
    the returned axes (bands, limits) before :func:`finish_plot` writes it."""
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    grid = cell_grid(cells)
    drawn: dict[tuple, list[str]] = {}
    for number, method in enumerate(grid.rows):
        _method_line(ax, [grid.get(method, n) for n in grid.columns], grid.columns, method, number, drawn)
    _mark_failures(ax, cells)
    _mark_trained_contexts(ax, grid.rows, grid.columns, context_of)
    length_axis(ax, grid.columns)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.set_title(title)
    return ax


def finish_plot(ax: Axes, out_dir: Path, name: str) -> None:
    ax.legend(fontsize="small", loc="best")
    save(ax.figure, out_dir, name)


def log_scale_when_wide(ax: Axes, cells: Sequence[Cell]) -> None:
    """Log y axis when values span more than 20x (a perplexity that explodes past the trained context)."""
    values = [c.value for c in cells if c.status == "ok"]
    if values and max(values) / min(values) > 20:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())


def spans_lengths(cells: Sequence[Cell], dataset: str | None) -> bool:
    """Whether ``dataset``'s cells were read at two lengths or more (a curve to draw)."""
    return len({c.length for c in cells if c.dataset == dataset and c.length}) >= 2


def default_plots(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    """What a task without its own plot hook gets: metric vs length, one plot per (metric, dataset)."""
    groups: dict[tuple, list[Cell]] = {}
    for cell in cells:
        if cell.length:
            groups.setdefault((cell.task, cell.metric, cell.dataset), []).append(cell)
    plots = []
    for (task, metric, dataset), chosen in groups.items():
        if len({c.length for c in chosen}) < 2:  # one length: no curve, the table holds the values
            continue
        name = "_".join(str(p) for p in (context.stem or task, metric, dataset, "vs_length") if p)
        where = context.source or dataset or task
        ax = length_plot(chosen, f"{metric} vs length, {where}", metric, context_of=context.context_of)
        finish_plot(ax, context.out_dir, name)
        plots.append((name, f"{task} {metric} vs evaluation length, {where}"))
    return plots


def _mark_trained_contexts(
    ax: Axes, methods: Sequence[str], lengths: Sequence[int], context_of: Callable[[str], int | None] | None
) -> None:
    contexts = {context_of(m) for m in methods} if context_of else set()
    for context in sorted(c for c in contexts if c and min(lengths) < c < max(lengths) * 1.25):
        ax.axvline(context, color="grey", linestyle=":", label=f"trained context ({format_length(context)})")


MARKERS = "os^DvPX*"
"""One marker shape per method, in order, so lines that cross or meet stay told apart without colour."""
SAME_LINE_SHIFT = 2**0.03
"""How far (a factor on the log2 length axis) a line equal to an earlier one is drawn beside it."""


def _method_line(
    ax: Axes, row: Sequence[Cell | None], lengths: Sequence[int], label: str, number: int, drawn: dict
):
    """The method's line; one whose every point an earlier line already drew (two methods scoring the
    same, often 0 or 100 everywhere) is shifted a little to the right, dashed, and says whose it equals,
    instead of vanishing under it."""
    points = [(n, c.value) for n, c in zip(lengths, row, strict=True) if ok_cell(c)]
    if not points:
        return None
    same = drawn.setdefault(tuple(points), [])
    xs, ys = zip(*points, strict=True)
    style = {"marker": MARKERS[number % len(MARKERS)], "label": label}
    if same:
        xs = [x * SAME_LINE_SHIFT ** len(same) for x in xs]
        style |= {"linestyle": "--", "label": f"{label} (= {same[0]})"}
    same.append(label)
    (line,) = ax.plot(xs, ys, **style)
    line.set_gid(label)  # the method, whatever the legend says
    return line


def _mark_failures(ax: Axes, cells: Sequence[Cell]) -> None:
    """``OOM`` / ``inf`` cells have no value to draw; the paper prints the word, so the plot does too:
    a marker on the top edge in the method's colour, the words stacked below it inside the axes."""
    colours = {line.get_gid() or line.get_label(): line.get_color() for line in ax.get_lines()}
    edge, stacked = ax.get_xaxis_transform(), {}  # x in data, y in axes fractions
    for cell in (c for c in cells if c.status != "ok"):
        colour = colours.get(cell.method, "red")
        level = stacked[cell.length] = stacked.get(cell.length, -1) + 1
        ax.plot([cell.length], [1.0], marker="v", color=colour, transform=edge, clip_on=False)
        ax.text(cell.length, 0.95 - 0.045 * level, STATUS_TEXT[cell.status], transform=edge, ha="center",
                va="top", fontsize="x-small", color=colour)  # fmt: skip


def ok_cell(cell: Cell | None) -> bool:
    return cell is not None and cell.status == "ok" and math.isfinite(cell.value)
