"""How MRCR's cells read: the base's tables of needle counts x lengths with their average and the
relative effective length, plus what the model cards print beside the curve: each needle count's
area under the curve (its mean over the lengths on a log2 axis, 0-100), the chance floor (the score
of a reply that copies one of the needles' answers at random behind the right string) and, for
OpenAI's rows, the mean score in OpenAI's own length bins (o200k_base tokens of the contents)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from coca_eval.generation.family import FamilyReading, average_text


def area_under_curve(points: Sequence[tuple[int, float]]) -> float | None:
    """The trapezoid area of (length, score) over log2(length), divided by the span: the curve's mean
    height, in the scores' unit (the one score for a single length; None for none)."""
    points = sorted(points)
    if not points:
        return None
    if len(points) == 1:
        return points[0][1]
    xs = [math.log2(n) for n, _ in points]
    area = sum((xs[i + 1] - xs[i]) * (points[i][1] + points[i + 1][1]) / 2 for i in range(len(xs) - 1))
    return area / (xs[-1] - xs[0])


def chance_floor(cells: Sequence[Any], task: str) -> float | None:
    """The mean chance floor of ``task``'s samples, x 100 (None where no sample recorded one)."""
    values = [
        float(s["chance"])
        for c in cells
        if c.dataset == task and c.status == "ok"
        for s in c.detail.get("samples") or []
        if s.get("chance") is not None
    ]
    return 100 * sum(values) / len(values) if values else None


class MrcrReading(FamilyReading):
    def task_table(self, cells: Sequence[Any], method: str):
        from coca_eval.report.layout import Entry

        table = super().task_table(cells, method)
        mine = [c for c in self.own(cells) if c.method == method]
        table.columns.append("Area")
        for row in table.rows:
            points = [(c.length, c.value) for c in mine if c.status == "ok" and c.dataset == row.label]
            if row.label == "Average":
                points = _average_points(table, mine)
            row.entries.append(Entry(average_text(area_under_curve(points)), row.label == "Average"))
        floors = [(t, chance_floor(mine, t)) for t in dict.fromkeys(c.dataset for c in mine)]
        shown = ", ".join(f"{t} {f:.1f}" for t, f in floors if f is not None)
        table.notes.append(
            "Area: the curve's mean over the lengths on a log2 axis. Chance floor (the right string, then "
            f"one of the needles' answers at random): {shown or 'none recorded'}."
        )
        return table

    def tables(self, cells: Sequence[Any], definition=None, runs: Sequence[Any] = ()) -> list:
        return [*super().tables(cells, definition, runs), *published_bin_tables(self.own(cells))]


def _average_points(table, cells) -> list[tuple[int, float]]:
    lengths = sorted({c.length for c in cells})
    average = next(r for r in table.rows if r.label == "Average")
    return [(n, float(e.text)) for n, e in zip(lengths, average.entries, strict=False) if _number(e.text)]


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def published_bin_tables(cells: Sequence[Any]) -> list:
    """Per method, the mean score of each needle count in OpenAI's bins (samples that recorded one)."""
    from coca_eval.lengths import format_length
    from coca_eval.report.layout import Entry, ReportTable, Row

    tables = []
    for method in dict.fromkeys(c.method for c in cells):
        scores: dict[tuple[str, int], list[float]] = {}
        for cell in (c for c in cells if c.method == method and c.status == "ok"):
            for sample in cell.detail.get("samples") or []:
                if sample.get("openai_bin"):
                    scores.setdefault((cell.dataset, sample["openai_bin"]), []).append(float(sample["score"]))
        if not scores:
            continue
        bins = sorted({b for _, b in scores})
        tasks = list(dict.fromkeys(t for t, _ in scores))
        rows = [Row(t, [Entry(_mean_text(scores.get((t, b)))) for b in bins]) for t in tasks]
        title = (
            f"MRCR scores of {method} in OpenAI's bins (o200k_base tokens, upper end; samples in brackets)"
        )
        columns = [format_length(b) for b in bins]
        tables.append(ReportTable(f"mrcr_openai_bins_{method}", title, columns, rows, "Needles"))
    return tables


def _mean_text(values: list[float] | None) -> str:
    return "-" if not values else f"{100 * sum(values) / len(values):.1f} ({len(values)})"


READING = MrcrReading(
    name="mrcr",
    title="MRCR",
    task_of="coca_eval.mrcr.tasks:task_of",
    score="coca_eval.mrcr.scoring:score_answer",
)
