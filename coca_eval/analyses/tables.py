"""The analyses' report tables: the headline metric by length (as every task has), and for
``frequencies`` the per-layer summary the p-RoPE paper reads off its Fig 3 (quarter shares)."""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.analyses.records import FrequencyDetail
from coca_eval.report.definition import ReportDefinition
from coca_eval.report.layout import Entry, ReportTable, Row, safe_stem
from coca_eval.report.length_tables import table_groups, value_table
from coca_eval.results import Cell

SHARE_COLUMNS = ("q low", "q high", "k low", "k high")


def layer_table(cell: Cell) -> ReportTable:
    """Rows = layers; columns = share of the q/k norm in the lowest and highest frequency quarter."""
    shares = FrequencyDetail.model_validate(cell.detail).shares
    columns = (shares.q_low, shares.q_high, shares.k_low, shares.k_high)
    rows = [
        Row(str(layer), [Entry(f"{values[layer]:.2f}") for values in columns])
        for layer in range(len(shares.q_low))
    ]
    title = (
        f"{cell.method}, {cell.length} tokens: share of plane norms in the lowest / highest frequency quarter"
    )
    return ReportTable(
        safe_stem(f"frequencies_layers_{cell.method}_{cell.length}"),
        title,
        list(SHARE_COLUMNS),
        rows,
        "Layer",
    )


def frequency_tables(cells: Sequence[Cell], definition: ReportDefinition, runs=()) -> list[ReportTable]:
    tables = [
        value_table(key, group, definition, "frequencies") for key, group in table_groups(cells).items()
    ]
    for table in tables:
        table.title = "Share of q/k norm in the lowest quarter of RoPE frequencies (uniform: 0.25)"
    return tables + [layer_table(c) for c in cells if c.status == "ok"]
