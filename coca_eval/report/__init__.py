"""Reports like the papers': Table 1/2/3/5 layouts in Markdown, LaTeX, CSV and HTML, and Fig 1/5/6 plots.

:func:`build_report` merges results files, lays out format-free tables (:mod:`.layout`), renders them
(:mod:`.render`, :mod:`.latex`), draws the plots (each task's hook, :mod:`.plots`) and writes the
files. A report definition (:mod:`.definition`) groups rows and asks for the paper's numbers beside ours.
Names load on first use, so importing a submodule (the definition's format list) stays cheap.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "FORMATS": "coca_eval.report.definition",
    "ReportDefinition": "coca_eval.report.definition",
    "load_definition": "coca_eval.report.definition",
    "ReportOutput": "coca_eval.report.build",
    "build_report": "coca_eval.report.build",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
