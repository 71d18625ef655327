"""How LongBench v2's cells read: the base's tables of domains x lengths with their average, and beside
them LongBench v2's own leaderboard row per method and length (its ``result.py``: accuracy overall, on
the easy and hard questions and on the short, medium and long ones, over every domain's samples,
:func:`coca_eval.longbench.scoring_v2.accuracy_table`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coca_eval.generation.family import FamilyReading, average_text


def leaderboard_rows(cells: Sequence[Any]) -> list[dict]:
    """``result.py``'s rows of the cells' samples: the question's classes and whether it was right."""
    return [
        {
            "difficulty": s["difficulty"],
            "length": s["length_class"],
            "pred": s.get("choice"),
            "judge": float(s["score"]) == 1.0,
        }
        for c in cells
        if c.status == "ok"
        for s in c.detail.get("samples") or []
    ]


class LongBenchV2Reading(FamilyReading):
    def tables(self, cells: Sequence[Any], definition=None, runs: Sequence[Any] = ()) -> list:
        return [*super().tables(cells, definition, runs), *leaderboard_tables(self.own(cells))]

    def console(self, run, params):
        """The base's console with LongBench v2's table under each method's domains."""
        from dataclasses import replace

        def method_tables(method: str) -> list:
            mine = [c for c in self.own(run.cells) if c.method == method]
            return [self.task_table(run.cells, method), *leaderboard_tables(mine)]

        return replace(super().console(run, params), method_table=method_tables)


def leaderboard_tables(cells: Sequence[Any]) -> list:
    from coca_eval.lengths import format_length
    from coca_eval.longbench.scoring_v2 import COLUMNS, accuracy_table
    from coca_eval.report.layout import Entry, ReportTable, Row

    tables = []
    for method in dict.fromkeys(c.method for c in cells):
        mine = [c for c in cells if c.method == method]
        rows = []
        for length in sorted({c.length for c in mine}):
            samples = leaderboard_rows([c for c in mine if c.length == length])
            if samples:
                table = accuracy_table(samples)
                rows.append(Row(format_length(length), [Entry(average_text(table[k])) for k in COLUMNS]))
        title = f"LongBench v2's table of {method} (every domain's questions; accuracy, %)"
        tables.append(ReportTable(f"longbench_v2_{method}", title, list(COLUMNS), rows, "Length"))
    return tables


READING = LongBenchV2Reading(
    name="longbench_v2",
    title="LongBench v2",
    task_of="coca_eval.longbench.v2_tasks:domain_task",
    score="coca_eval.longbench.scoring_v2:score_choice",
)
