"""``coca-eval report``: merge runs, lay out the tables, draw the plots, write the requested formats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic
from coca_eval.paper import paper_spec
from coca_eval.report.assemble import make_tables, paper_cells, task_order
from coca_eval.report.definition import FORMATS, ReportDefinition
from coca_eval.report.documents import html_document, markdown_document, run_lines
from coca_eval.report.latex import latex_document, render_latex
from coca_eval.report.layout import ReportTable, safe_stem
from coca_eval.report.render import render_csv
from coca_eval.report.runs import RunSet, merge_runs
from coca_eval.results import Cell
from coca_eval.taskspec import Plot, PlotContext, spec_for


@dataclass
class ReportOutput:
    tables: list[ReportTable]
    plots: list[Plot]
    files: list[Path] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)  # plot name -> its own heading (Analyses)


def build_report(
    paths: Sequence[Path], definition: ReportDefinition, formats: Sequence[str], out_dir: Path
) -> ReportOutput:
    """Everything the report holds, written under ``out_dir`` (plots in ``out_dir/plots``)."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise CocaEvalError(
            f"unknown report format(s) {', '.join(unknown)} (choose from {', '.join(FORMATS)})"
        )
    runs = merge_runs(paths, definition.labels)
    if definition.metric is not None:
        runs.cells = metric_view(runs.cells, definition.metric)
    output = ReportOutput(make_tables(runs, definition), [])
    if definition.plots:
        output.plots = draw_plots(runs, definition, Path(out_dir) / "plots", output.sections)
    sources = run_lines(runs.runs)
    for fmt in dict.fromkeys(formats):
        output.files += WRITERS[fmt](output, definition, sources, Path(out_dir))
    return output


def metric_view(cells: Sequence[Cell], metric: str) -> list[Cell]:
    """Every cell whose task offers ``metric`` as a view, shown that way (others unchanged), so models
    with different tokenizers compare in one table (``--metric bpb``)."""
    views = {c.task: spec_for(c.task).report.views for c in cells}
    if not any(metric in offered for offered in views.values()):
        offered = sorted({name for names in views.values() for name in names})
        raise CocaEvalError(
            f"--metric {metric}: no task in these runs offers it (offered: {', '.join(offered) or 'none'})"
        )
    return [views[c.task][metric](c) if metric in views[c.task] else c for c in cells]


def draw_plots(
    runs: RunSet, definition: ReportDefinition, plot_dir: Path, sections: dict[str, str] | None = None
) -> list[Plot]:
    """Each task's plots (its spec's hook, else metric vs length), then the requested paper tables;
    ``sections`` learns which plots a task files under its own heading (the analyses')."""

    def context_of(method: str) -> int | None:
        return definition.trained_context or runs.trained_context(method)

    plots: list[Plot] = []
    for task in task_order(runs.cells):
        context = PlotContext(plot_dir, definition, stem="", context_of=context_of)
        drawn = _plot_hook(task)([c for c in runs.cells if c.task == task], context)
        heading = spec_for(task).report.section
        if heading and sections is not None:
            sections.update({safe_stem(name): heading for name, _ in drawn})
        plots += drawn
    return [(safe_stem(name), caption) for name, caption in plots + paper_plots(definition, plot_dir)]


def paper_plots(definition: ReportDefinition, plot_dir: Path) -> list[Plot]:
    """The requested paper tables drawn the same way as our runs (their Fig 1 is their Table 1 drawn),
    so the two pictures can be compared. Tables of deltas are not drawn."""
    plots = []
    for key in definition.paper:
        spec = paper_spec(key)
        if not spec.bold:
            continue
        source = f"paper, {spec.caption.split(':')[0]}"
        for task in spec.tasks:
            stem = f"paper_{key.replace('-', '_')}_{task}"
            context = PlotContext(plot_dir, definition, stem=stem, source=source)
            plots += _plot_hook(task)(paper_cells(key, task), context)
    return plots


def _plot_hook(task: str):
    from coca_eval.report.plots import default_plots

    return spec_for(task).report.plots or default_plots


def _write(path: Path, text: str, written: list[Path]) -> None:
    write_atomic(path, text)
    written.append(path)


def _markdown(output: ReportOutput, definition: ReportDefinition, sources, out_dir: Path) -> list[Path]:
    written: list[Path] = []
    _write(
        out_dir / "report.md",
        markdown_document(
            definition.title, output.tables, output.plots, sources, definition.notes, output.sections
        ),
        written,
    )
    return written


def _latex(output: ReportOutput, definition: ReportDefinition, sources, out_dir: Path) -> list[Path]:
    written: list[Path] = []
    for table in output.tables:
        _write(out_dir / f"{table.name}.tex", render_latex(table), written)
    figures = [(f"plots/{name}.png", caption) for name, caption in output.plots]
    document = latex_document(definition.title, [t.name for t in output.tables], figures, definition.notes)
    _write(out_dir / "report.tex", document, written)
    return written


def _csv(output: ReportOutput, definition: ReportDefinition, sources, out_dir: Path) -> list[Path]:
    written: list[Path] = []
    for table in output.tables:
        _write(out_dir / f"{table.name}.csv", render_csv(table), written)
    return written


def _html(output: ReportOutput, definition: ReportDefinition, sources, out_dir: Path) -> list[Path]:
    written: list[Path] = []
    document = html_document(
        definition.title,
        output.tables,
        output.plots,
        sources,
        out_dir / "plots",
        definition.notes,
        output.sections,
    )
    _write(out_dir / "report.html", document, written)
    return written


WRITERS = {"md": _markdown, "latex": _latex, "csv": _csv, "html": _html}
