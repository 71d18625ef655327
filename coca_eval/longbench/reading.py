"""How LongBench's cells read: the base's tables of tasks x lengths with their average, and LongBench's
own summary beside them: per method, language and length, each category's mean over its tasks and
"Avg" over the categories (:func:`coca_eval.longbench.averages.category_averages`, on the task scores
rounded to two places as ``eval.py`` writes them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coca_eval.generation.family import FamilyReading, average_text


class LongBenchReading(FamilyReading):
    def tables(self, cells: Sequence[Any], definition=None, runs: Sequence[Any] = ()) -> list:
        return [*super().tables(cells, definition, runs), *category_tables(self.own(cells))]


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


READING = LongBenchReading(
    name="longbench",
    title="LongBench",
    task_of="coca_eval.longbench.tasks:task_of",
    score="coca_eval.longbench.grading:score_answer",
)
