"""LaTeX tables in the papers' style (booktabs, group captions across the table) and a document that
compiles on its own with only the ``booktabs`` and ``graphicx`` packages (a table wider than the text
is scaled down to it, so the Table 1 layout with the paper's seven lengths still fits a page)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from coca_eval.report.layout import ReportTable
from coca_eval.report.render import GROUP_MARK, table_frame

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def render_latex(table: ReportTable) -> str:
    """A ``table`` float whose tabular comes from pandas, with group rows turned into full-width
    italic captions and a rule before each group and before trailing ungrouped rows (a Total)."""
    frame = table_frame(table, lambda t: rf"\textbf{{{t}}}", latex_escape)
    frame.columns = [latex_escape(str(c)) for c in frame.columns]
    tabular = frame.to_latex(index=False, escape=False, column_format="l" + "r" * len(table.columns))
    lines, span = [], len(table.columns) + 1
    for line in tabular.splitlines():
        match = re.match(rf"^{GROUP_MARK}(.*?)\s*(&\s*)*\\\\$", line.strip())
        if match is None:
            lines.append(line)
            continue
        if lines[-1] != r"\midrule":
            lines.append(r"\midrule")
        lines.append(rf"\multicolumn{{{span}}}{{l}}{{\textit{{{match.group(1)}}}}} \\")
    _rule_before_ungrouped(table, lines)
    notes = "".join(f"\n\\par\\footnotesize {latex_escape(note)}" for note in table.notes)
    return (
        "\\begin{table}[htbp]\n\\centering\n\\small\n"
        f"\\caption{{{latex_escape(table.title)}}}\n\\label{{tab:{table.name}}}\n"
        "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
        + "\n".join(lines)
        + f"}}{notes}\n\\end{{table}}\n"
    )


def latex_document(
    title: str, tables: Sequence[str], figures: Sequence[tuple[str, str]], notes: Sequence[str] = ()
) -> str:
    """The whole report: ``\\input`` of each table file and one figure per plot (PNG, relative path)."""
    body = [latex_escape(note) + "\n" for note in notes] + [f"\\input{{{name}}}" for name in tables]
    for path, caption in figures:
        body.append(
            "\\begin{figure}[htbp]\n\\centering\n"
            f"\\includegraphics[width=0.85\\linewidth]{{{path}}}\n\\caption{{{latex_escape(caption)}}}\n"
            "\\end{figure}"
        )
    return (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        f"\\title{{{latex_escape(title)}}}\n\\author{{coca-eval}}\n\\date{{}}\n\\begin{{document}}\n\\maketitle\n"
        + "\n".join(body)
        + "\n\\clearpage\n\\end{document}\n"
    )


def _rule_before_ungrouped(table: ReportTable, lines: list[str]) -> None:
    """A row after the groups that belongs to none of them (the Total) is set off by a rule."""
    grouped = [row.group is not None for row in table.rows]
    if not (any(grouped) and not grouped[-1]):
        return
    first_loose = next(i for i in range(len(grouped)) if not any(grouped[i:]))
    label = latex_escape(table.rows[first_loose].label)
    for index, line in enumerate(lines):
        if line.startswith(f"{label} &"):
            lines.insert(index, r"\midrule")
            return
