"""Where in the prompt retrieval fails: depth x length heat maps, accuracy by key-to-end distance
(Fig 6: four distance ranges) and with the key inside vs outside the trained window (Fig 5)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from coca_eval.lengths import format_length
from coca_eval.passkey.bins import depth_matrix, range_accuracy, samples_by_method, window_points
from coca_eval.report.plots import finish_plot, length_axis, length_plot, ok_cell, save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext


def plot_hook(cells: Sequence[Cell], context: PlotContext) -> list[Plot]:
    """The report's plot hook: accuracy vs length; for a run's own cells also where retrieval fails."""
    stem = context.stem or "passkey_vs_length"
    plots = accuracy_plot(cells, context.out_dir, stem, context.source)
    if context.source is not None:
        return plots
    definition = context.definition
    return [
        *plots,
        *depth_heatmap(cells, context.out_dir, definition.depth_bins),
        *distance_ranges(cells, context.out_dir, definition.distance_ranges),
        *trained_window(cells, context.out_dir, context.context_of),
    ]


def accuracy_plot(
    cells: Sequence[Cell], out_dir: Path, stem: str = "passkey_vs_length", source: str | None = None
) -> list[Plot]:
    """Accuracy per method vs prompt length, with the Wilson 95 % band each cell records."""
    chosen = [c for c in cells if c.length]
    if not chosen:
        return []
    title = f"Passkey retrieval, {source}" if source else "Passkey retrieval (band: Wilson 95 %)"
    ax = length_plot(chosen, title, "passkey accuracy (points)", "prompt length (tokens)")
    colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
    for method in dict.fromkeys(c.method for c in chosen):
        band = sorted(
            (c.length, c.detail["wilson95"])
            for c in chosen
            if c.method == method and ok_cell(c) and "wilson95" in c.detail
        )
        if band and method in colours:
            xs, bounds = zip(*band, strict=True)
            lows, highs = [b[0] for b in bounds], [b[1] for b in bounds]
            ax.fill_between(xs, lows, highs, alpha=0.15, color=colours[method])
    ax.set_ylim(-2, 105)
    finish_plot(ax, out_dir, stem)
    caption = (
        f"Passkey accuracy vs prompt length, {source}" if source else "Passkey accuracy vs prompt length"
    )
    return [(stem, caption + ("" if source else ", Wilson 95 % band"))]


def depth_heatmap(cells: Sequence[Cell], out_dir: Path, bins: int) -> list[Plot]:
    """One panel per method: key depth (rows, 0 = start of the prompt) x length, colour = accuracy."""
    samples = samples_by_method(cells)
    if not samples:
        return []
    lengths = sorted({n for rows in samples.values() for n, _ in rows})
    fig = Figure(figsize=(2.0 + 1.0 * len(lengths) * len(samples), 4.0), layout="constrained")
    axes = fig.subplots(1, len(samples), squeeze=False)[0]
    for ax, (method, rows) in zip(axes, samples.items(), strict=True):
        image = ax.imshow(depth_matrix(rows, lengths, bins), cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
        ax.set_xticks(range(len(lengths)), [format_length(n) for n in lengths])
        ax.set_yticks(range(bins), [f"{(t + 0.5) / bins:.2f}" for t in range(bins)], fontsize="x-small")
        ax.set(title=method, xlabel="prompt length")
    axes[0].set_ylabel("key depth (fraction of prompt)")
    fig.colorbar(image, ax=list(axes), label="accuracy (points)")
    save(fig, out_dir, "passkey_depth_heatmap")
    return [("passkey_depth_heatmap", f"Passkey accuracy by key depth ({bins} bins) and prompt length")]


def distance_ranges(cells: Sequence[Cell], out_dir: Path, ranges: int) -> list[Plot]:
    """Fig 6: accuracy over all lengths, split into equal ranges of token distance from key to the end."""
    samples = samples_by_method(cells)
    if not samples:
        return []
    edges = np.linspace(0, max(n for rows in samples.values() for n, _ in rows), ranges + 1)
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / len(samples)
    for k, (method, rows) in enumerate(samples.items()):
        accuracy, counts = range_accuracy(rows, edges)
        bars = ax.bar(np.arange(ranges) + (k - (len(samples) - 1) / 2) * width, accuracy, width, label=method)
        labels = [f"{a:.0f}" if c else "" for a, c in zip(accuracy, counts, strict=True)]
        ax.bar_label(bars, labels=labels, fontsize="x-small", padding=1)
    names = [
        f"{format_length(int(a))}-{format_length(int(b))}" for a, b in zip(edges, edges[1:], strict=False)
    ]
    ax.set_xticks(range(ranges), names)
    ax.set_ylim(0, 112)
    ax.set(
        xlabel="distance from the key to the end of the prompt (tokens)", ylabel="passkey accuracy (points)"
    )
    ax.set_title(f"Passkey accuracy on {ranges} distance ranges")
    ax.legend(fontsize="small")
    save(fig, out_dir, "passkey_distance_ranges")
    return [("passkey_distance_ranges", f"Passkey accuracy by key-to-end distance, {ranges} equal ranges")]


def trained_window(
    cells: Sequence[Cell], out_dir: Path, context_of: Callable[[str], int | None]
) -> list[Plot]:
    """Fig 5: accuracy vs length with the key inside (distance < trained context) or outside the window;
    methods whose trained context is unknown are left out (none known: no plot)."""
    samples = {m: rows for m, rows in samples_by_method(cells).items() if context_of(m)}
    if not samples:
        return []
    lengths = sorted({n for rows in samples.values() for n, _ in rows})
    fig = Figure(figsize=(10.0, 4.0), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, inside, title in ((axes[0], True, "(a) key inside"), (axes[1], False, "(b) key outside")):
        for method, rows in samples.items():
            window = context_of(method)
            points = window_points(rows, window, inside)
            if points:
                label = f"{method} (window {format_length(window)})"
                ax.plot(*zip(*points, strict=True), marker="o", label=label)
        if ax.lines:
            ax.legend(fontsize="x-small")
        else:
            ax.text(0.5, 0.5, "no samples here", transform=ax.transAxes, ha="center", color="grey")
        length_axis(ax, lengths)
        ax.set(title=f"{title} the trained window", xlabel="prompt length (tokens)", ylim=(-2, 105))
    axes[0].set_ylabel("passkey accuracy (points)")
    save(fig, out_dir, "passkey_trained_window")
    caption = "Passkey accuracy with the key inside vs outside the trained context window"
    return [("passkey_trained_window", caption)]
