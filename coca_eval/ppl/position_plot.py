"""The loss-by-position figure: mean NLL against the position in the window, one line per method, with
a band resampling documents and the trained context marked.

With ``--mode truncated`` at one long length this is the extrapolation figure of the position-scheme
papers (ALiBi, CoCA, YaRN, LongRoPE): where a method's loss starts to climb past the length it was
trained on. Cells of runs from before the buckets existed (or with a document without a finite sum)
have no curve, and their report has no such figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from coca_eval.intervals import resample_counts
from coca_eval.lengths import format_length
from coca_eval.ppl.positions import bucket_end
from coca_eval.ppl.report import doc_parts
from coca_eval.report.plots import save
from coca_eval.results import Cell
from coca_eval.taskspec import Plot


@dataclass(frozen=True)
class PositionCurve:
    """Mean NLL per bucket (``starts``) over a cell's documents, with its bootstrap band (None with
    one document). ``contexts`` is where each bucket is drawn: the geometric middle of the contexts
    ``start + 1 .. end`` its predictions had."""

    starts: np.ndarray
    mean: np.ndarray
    low: np.ndarray | None
    high: np.ndarray | None

    @property
    def contexts(self) -> np.ndarray:
        ends = np.array([bucket_end(int(s)) for s in self.starts], dtype=np.float64)
        return np.sqrt((self.starts + 1.0) * ends)


def bucket_matrices(cell: Cell) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(starts, nll [docs, buckets], tokens [docs, buckets])`` of an ok cell whose every document
    has buckets; None otherwise."""
    parts = doc_parts(cell)
    if cell.status != "ok" or not parts or any(p.positions is None for p in parts):
        return None
    starts = sorted({s for p in parts for s in p.positions.starts})
    column = {s: j for j, s in enumerate(starts)}
    nll, tokens = np.zeros((len(parts), len(starts))), np.zeros((len(parts), len(starts)))
    for row, part in enumerate(parts):
        for start, total, count in zip(
            part.positions.starts, part.positions.nll, part.positions.tokens, strict=True
        ):
            nll[row, column[start]], tokens[row, column[start]] = total, count
    return np.asarray(starts, dtype=np.int64), nll, tokens


def position_curve(
    cell: Cell, level: float = 0.95, n_boot: int = 1000, seed: int = 0
) -> PositionCurve | None:
    """The cell's curve: per bucket, total NLL over total tokens (the same micro-average as the cell's
    perplexity); the band is the percentile bootstrap of that ratio, resampling whole documents."""
    matrices = bucket_matrices(cell)
    if matrices is None:
        return None
    starts, nll, tokens = matrices
    mean = nll.sum(axis=0) / tokens.sum(axis=0)
    if len(nll) < 2:
        return PositionCurve(starts, mean, None, None)
    counts = resample_counts(len(nll), n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):  # a draw without a bucket's documents: no value
        draws = (counts @ nll) / (counts @ tokens)
    tail = (1.0 - level) / 2.0
    low, high = np.nanquantile(draws, [tail, 1.0 - tail], axis=0)
    return PositionCurve(starts, mean, low, high)


def position_plots(
    cells: Sequence[Cell], out_dir: Path, context_of: Callable[[str], int | None] | None = None
) -> list[Plot]:
    """One figure per (dataset, length) whose cells have buckets, a line and band per method."""
    curves: dict[tuple, list[tuple[str, PositionCurve]]] = {}
    for cell in cells:
        curve = position_curve(cell) if cell.length else None
        if curve is not None:
            curves.setdefault((cell.dataset, cell.length, cell.detail.get("mode")), []).append(
                (cell.method, curve)
            )
    datasets = {dataset for dataset, _, _ in curves}
    plots = []
    for (dataset, length, mode), drawn in curves.items():
        where = f"{dataset}, L = {format_length(length)}"
        name = "_".join(
            str(p) for p in ("loss_vs_position", dataset if len(datasets) > 1 else None, length) if p
        )
        _draw(drawn, f"Loss by position in the window, {where}", context_of, out_dir, name)
        plots.append((name, f"Loss by position in the window, {where} ({mode or 'sliding'} windows; "
                            "95 % bootstrap bands over documents; dotted: trained context)"))  # fmt: skip
    return plots


def _draw(
    drawn: Sequence[tuple[str, PositionCurve]],
    title: str,
    context_of: Callable[[str], int | None] | None,
    out_dir: Path,
    name: str,
) -> None:
    fig = Figure(figsize=(6.4, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for method, curve in drawn:
        (line,) = ax.plot(curve.contexts, curve.mean, marker=".", label=method)
        if curve.low is not None:
            ax.fill_between(curve.contexts, curve.low, curve.high, color=line.get_color(), alpha=0.2, lw=0)
    widest = max(float(c.contexts.max()) for _, c in drawn)
    trained = {context_of(m) for m, _ in drawn} if context_of else set()
    for context in sorted(c for c in trained if c and c < widest * 1.25):
        ax.axvline(context, color="grey", linestyle=":", label=f"trained context ({format_length(context)})")
    ax.set_xscale("log", base=2)
    ticks = [4**k for k in range(int(np.log2(widest)) // 2 + 1)]
    ax.set_xticks(ticks, [format_length(n) for n in ticks])
    ax.minorticks_off()
    ax.grid(True, alpha=0.3)
    ax.set(xlabel="context of the prediction (position in the window + 1, tokens)",
           ylabel="loss (nats per token)", title=title)  # fmt: skip
    ax.legend(fontsize="small", loc="best")
    save(fig, out_dir, name)
