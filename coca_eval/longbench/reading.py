"""How LongBench's cells read: the base's tables of tasks x lengths with their average, and LongBench's
own summary beside them: per method, language and length, each category's mean over its tasks and
"Avg" over the categories (:func:`coca_eval.longbench.averages.category_averages`, on the task scores
rounded to two places as ``eval.py`` writes them); for LongBench-E's files, per method and length, each
task's score in LongBench-E's length buckets (``eval.py --e``: by the row's own ``length``) and their
mean over tasks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coca_eval.generation.family import FamilyReading, average_text


class LongBenchReading(FamilyReading):
    def tables(self, cells: Sequence[Any], definition=None, runs: Sequence[Any] = ()) -> list:
        own = self.own(cells)
        return [*super().tables(cells, definition, runs), *category_tables(own), *bucket_tables(own)]


def category_tables(cells: Sequence[Any]) -> list:
    from coca_eval.lengths import format_length
    from coca_eval.longbench.averages import CATEGORIES, CHINESE_TASKS, category_averages
    from coca_eval.report.layout import Entry, ReportTable, Row

    tables = []
    for method in dict.fromkeys(c.method for c in cells):
        mine = [c for c in cells if c.method == method and c.status == "ok"]
        lengths = sorted({c.length for c in mine})
        for language in ("en", "zh"):
            if not any((c.dataset in CHINESE_TASKS) == (language == "zh") for c in mine):
                continue  # code alone is in both leaderboards: a table for a language with a task of its own
            by_length = {
                n: category_averages({c.dataset: round(c.value, 2) for c in mine if c.length == n}, language)
                for n in lengths
            }
            names = [*CATEGORIES, "Avg"]
            rows = [
                Row(name, [Entry(average_text(by_length[n].get(name)), name == "Avg") for n in lengths])
                for name in names
                if any(name in by_length[n] for n in lengths)
            ]
            title = f"LongBench category averages of {method} ({language}: its leaderboard's tasks)"
            columns = [format_length(n) for n in lengths]
            tables.append(
                ReportTable(f"longbench_categories_{language}_{method}", title, columns, rows, "Category")
            )
    return tables


def bucket_tables(cells: Sequence[Any]) -> list:
    """LongBench-E's table per method and length: tasks x 0-4k, 4-8k, 8k+ (100 x the mean of the
    bucket's sample scores, two places, as ``scorer_e``), and the buckets' mean over tasks."""
    from coca_eval.lengths import format_length
    from coca_eval.longbench.averages import BUCKETS, bucket_averages, bucket_scores
    from coca_eval.report.layout import Entry, ReportTable, Row

    tables = []
    mine = [c for c in cells if c.status == "ok" and c.detail.get("subset") == "e"]
    for method, length in dict.fromkeys((c.method, c.length) for c in mine):
        scores = {
            c.dataset: bucket_scores(c.detail.get("samples") or [])
            for c in mine
            if (c.method, c.length) == (method, length)
        }
        rows = [Row(task, [Entry(_bucket_text(s[b])) for b in BUCKETS]) for task, s in scores.items()]
        means = bucket_averages(scores)
        rows.append(Row("Average", [Entry(_bucket_text(means[b]), True) for b in BUCKETS]))
        title = f"LongBench-E length buckets of {method} at {format_length(length)} (the rows' own length)"
        tables.append(ReportTable(f"longbench_e_{method}_{length}", title, list(BUCKETS), rows, "Task"))
    return tables


def _bucket_text(value: float) -> str:
    return "-" if value != value else f"{value:.2f}"  # NaN: an empty bucket


READING = LongBenchReading(
    name="longbench",
    title="LongBench",
    task_of="coca_eval.longbench.tasks:task_of",
    score="coca_eval.longbench.grading:score_answer",
)
