"""Whole report documents: Markdown (renders on GitHub, plots as linked PNGs) and one self-contained
HTML file (plots embedded as base64 PNG, so it can be mailed or attached to a CI run as is)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from coca_eval.report.layout import ReportTable
from coca_eval.report.plots import Plot
from coca_eval.report.render import render_html, render_markdown
from coca_eval.results import Run

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; }
table.coca-table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-variant-numeric: tabular-nums; }
table.coca-table th, table.coca-table td { padding: 0.2rem 0.6rem; text-align: right; }
table.coca-table td:first-child, table.coca-table th:first-child { text-align: left; }
table.coca-table thead { border-bottom: 1px solid #444; border-top: 2px solid #444; }
table.coca-table tbody { border-bottom: 2px solid #444; }
tr.group td { text-align: left; padding-top: 0.5rem; }
p.note { color: #555; font-size: 0.9rem; }
figure { margin: 1rem 0; } figure img { max-width: 100%; }
"""


def run_lines(runs: Sequence[tuple[Path, Run]]) -> list[str]:
    """Where the numbers come from: file name, creation time, code revision."""
    return [
        f"{path.name}: {run.config.get('task', '?')} run of {run.created}, coca-eval {run.coca_eval_version}"
        + (f", git {run.git[:12]}" if run.git else "")
        for path, run in runs
    ]


def by_section(plots: Sequence[Plot], sections: dict[str, str] | None) -> dict[str, list[Plot]]:
    """Plots grouped under their headings: ``Plots`` first, then each task's own section (Analyses)."""
    grouped: dict[str, list[Plot]] = {"Plots": []}
    for name, caption in plots:
        grouped.setdefault((sections or {}).get(name, "Plots"), []).append((name, caption))
    return {heading: members for heading, members in grouped.items() if members}


def markdown_document(
    title: str,
    tables: Sequence[ReportTable],
    plots: Sequence[Plot],
    sources: Sequence[str],
    notes: Sequence[str] = (),
    sections: dict[str, str] | None = None,
) -> str:
    parts = [
        f"# {title}\n",
        *[f"{note}\n" for note in notes],
        "Runs:\n",
        *[f"- `{line}`" for line in sources],
        "",
    ]
    parts += [render_markdown(table) for table in tables]
    for heading, members in by_section(plots, sections).items():
        parts.append(f"## {heading}\n")
        parts += [f"![{caption}](plots/{name}.png)\n\n*{caption}*\n" for name, caption in members]
    return "\n".join(parts).rstrip() + "\n"


def html_document(
    title: str,
    tables: Sequence[ReportTable],
    plots: Sequence[Plot],
    sources: Sequence[str],
    plot_dir: Path,
    notes: Sequence[str] = (),
    sections: dict[str, str] | None = None,
) -> str:
    items = "".join(f"<li><code>{html.escape(line)}</code></li>" for line in sources)
    body = [f"<h1>{html.escape(title)}</h1>", *[f"<p>{html.escape(note)}</p>" for note in notes]]
    body.append(f"<p>Runs:</p><ul>{items}</ul>")
    body += [render_html(table) for table in tables]
    for heading, members in by_section(plots, sections).items():
        if heading != "Plots":
            body.append(f'<h2 id="{html.escape(heading.lower())}">{html.escape(heading)}</h2>')
        for name, caption in members:
            data = base64.b64encode((plot_dir / f"{name}.png").read_bytes()).decode("ascii")
            body.append(
                f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(caption)}</figcaption></figure>"
            )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
