"""Markdown, CSV and HTML from a :class:`ReportTable`, each through a pandas DataFrame.

Group names become a row of their own in Markdown and HTML (as the papers print "Training from
scratch" above its rows) and a ``group`` column in CSV, which is meant for programs, not eyes; the CSV
layout is the one of the shipped paper tables, so ours and theirs load the same way.
"""

from __future__ import annotations

import html
import re

import pandas as pd

from coca_eval.report.layout import ReportTable

GROUP_MARK = "\x00group:"  # a label no method can have, replaced after pandas has laid the table out


def table_frame(table: ReportTable, bold, escape, group_rows: bool = True) -> pd.DataFrame:
    """Rows with marked-up entries; group headers as marked rows (or, without, a ``group`` column)."""
    records, previous = [], object()
    for row in table.rows:
        if group_rows and row.group is not None and row.group != previous:
            records.append([GROUP_MARK + escape(row.group)] + [""] * len(table.columns))
        previous = row.group
        texts = [bold(escape(e.text)) if e.bold and e.text else escape(e.text) for e in row.entries]
        records.append(([] if group_rows else [row.group or ""]) + [escape(row.label)] + texts)
    head = ([] if group_rows else ["group"]) + [table.row_header if group_rows else table.row_header.lower()]
    return pd.DataFrame(records, columns=head + list(table.columns))


def render_markdown(table: ReportTable) -> str:
    frame = table_frame(table, lambda t: f"**{t}**", _md_escape)
    frame.iloc[:, 0] = [_md_group(v) for v in frame.iloc[:, 0]]
    align = ("left",) + ("right",) * len(table.columns)
    body = frame.to_markdown(index=False, disable_numparse=True, colalign=align)
    notes = "".join(f"\n{note}\n" for note in table.notes)
    return f"### {table.title}\n\n{body}\n{notes}"


def render_csv(table: ReportTable) -> str:
    frame = table_frame(table, lambda t: t, lambda t: t, group_rows=False)
    if not frame["group"].any():
        frame = frame.drop(columns="group")
    return frame.to_csv(index=False, lineterminator="\n")


def render_html(table: ReportTable) -> str:
    frame = table_frame(table, lambda t: f"<b>{t}</b>", html.escape)
    body = frame.to_html(index=False, escape=False, border=0, classes="coca-table")
    span = len(table.columns) + 1
    body = re.sub(
        r"<tr>\s*<td>\x00group:(.*?)</td>(\s*<td></td>)*\s*</tr>",
        lambda m: f'<tr class="group"><td colspan="{span}"><em>{m.group(1)}</em></td></tr>',
        body,
    )
    notes = "".join(f"<p class='note'>{html.escape(note)}</p>" for note in table.notes)
    return f"<h3>{html.escape(table.title)}</h3>\n{body}\n{notes}"


def terminal_frame(table: ReportTable) -> pd.DataFrame:
    """The frame :func:`coca_eval.tables.rich_table` prints: rich bold markup, groups as italic rows."""
    frame = table_frame(table, lambda t: f"[bold]{t}[/bold]", lambda t: t)
    labels = [
        f"[italic]{v[len(GROUP_MARK) :]}[/italic]" if v.startswith(GROUP_MARK) else v
        for v in frame.iloc[:, 0]
    ]
    frame = frame.drop(columns=frame.columns[0]).set_axis(labels, axis=0)
    frame.index.name = table.row_header
    return frame


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def _md_group(value: str) -> str:
    return f"*{value[len(GROUP_MARK) :]}*" if value.startswith(GROUP_MARK) else value
