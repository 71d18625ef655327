"""The statistical CI regression gate: does a candidate run regress against a baseline run?

``run_gate`` pairs the runs' cells (refusing runs made under different protocols), tests each pair
(paired document bootstrap for perplexity, exact McNemar for passkey), corrects for testing many cells
at once, and returns a :class:`GateResult` whose ``exit_code`` is 0 (pass) or 1 (regression).
"""

from coca_eval.gate.compare import CellVerdict, GateResult, run_gate
from coca_eval.gate.options import GateOptions, make_options
from coca_eval.gate.protocol import IncomparableRuns
from coca_eval.gate.summary import append_step_summary, markdown_summary, rich_summary, verdict_json

__all__ = [
    "CellVerdict",
    "GateOptions",
    "GateResult",
    "IncomparableRuns",
    "make_options",
    "append_step_summary",
    "markdown_summary",
    "rich_summary",
    "run_gate",
    "verdict_json",
]
