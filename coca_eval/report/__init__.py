"""Reports like the papers': Table 1/2/3/5 layouts in Markdown, LaTeX, CSV and HTML, and Fig 1/5/6 plots.

:func:`build_report` merges results files, lays out format-free tables (:mod:`.layout`), renders them
(:mod:`.render`, :mod:`.latex`), draws the plots (:mod:`.plots`, :mod:`.passkey_plots`) and writes the
files. A report definition (:mod:`.definition`) groups rows and asks for the paper's numbers beside ours.
"""

from coca_eval.report.build import ReportOutput, build_report
from coca_eval.report.definition import FORMATS, ReportDefinition, load_definition

__all__ = ["FORMATS", "ReportDefinition", "ReportOutput", "build_report", "load_definition"]
