"""Passkey accuracy split by where the key sat: by depth, by distance to the prompt end, and inside or
outside the trained window, in points (0-100, as the cells). Pure computations on the per-sample
records, so the plots stay thin."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from coca_eval.results import Cell

Samples = list[tuple[int, dict]]  # (prompt length, sample record)


def samples_by_method(cells: Sequence[Cell]) -> dict[str, Samples]:
    """Method -> its samples over the ok passkey cells that kept them."""
    found: dict[str, Samples] = {}
    for cell in cells:
        if cell.task == "passkey" and cell.status == "ok" and cell.length:
            found.setdefault(cell.method, []).extend((cell.length, s) for s in cell.detail.get("samples", []))
    return {m: s for m, s in found.items() if s}


def depth_matrix(rows: Samples, lengths: Sequence[int], bins: int) -> np.ndarray:
    """``[bins, lengths]`` accuracy by requested key depth (row 0 = start of the prompt); NaN where empty."""
    correct, total = np.zeros((bins, len(lengths))), np.zeros((bins, len(lengths)))
    for length, sample in rows:
        depth_bin = min(int(sample["depth"] * bins), bins - 1)
        correct[depth_bin, lengths.index(length)] += sample["correct"]
        total[depth_bin, lengths.index(length)] += 1
    return np.divide(100 * correct, total, out=np.full_like(correct, np.nan), where=total > 0)


def range_accuracy(rows: Samples, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and sample count per distance range ``[edges[i], edges[i+1])`` (the last one closed)."""
    ranges = len(edges) - 1
    which = np.searchsorted(edges, [s["distance"] for _, s in rows], side="right") - 1
    which = np.clip(which, 0, ranges - 1)
    hits = np.bincount(which, weights=[float(s["correct"]) for _, s in rows], minlength=ranges)
    counts = np.bincount(which, minlength=ranges)
    return np.divide(100 * hits, counts, out=np.full(ranges, np.nan), where=counts > 0), counts


def window_points(rows: Samples, window: int, inside: bool) -> list[tuple[int, float]]:
    """(length, accuracy) over the samples whose key lies inside (distance < window) or outside it."""
    chosen: dict[int, list[bool]] = {}
    for length, sample in rows:
        if (sample["distance"] < window) == inside:
            chosen.setdefault(length, []).append(bool(sample["correct"]))
    return [(length, 100 * float(np.mean(hits))) for length, hits in sorted(chosen.items())]
