"""Run-level checks: what a task gates on besides its cells, read from the whole of each run.

Cells are tested one by one (:mod:`coca_eval.gate.compare`), but some numbers belong to a run, not a
cell: RULER's effective context length is read from every task at every length of a method at once.
A task adds such checks through its spec's ``GateHooks.run_checks(base, cand, options)``, which
returns one :class:`RunCheck` per thing it checks (per method, usually); a failed check fails the gate
like a regressed cell. The checks run after the protocol check, so both runs are known comparable.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunCheck:
    """One run-level comparison: what was compared (``effective length``), for which method, both
    runs' values as text, and whether the candidate fails it (``reason`` says why, or what passed)."""

    task: str
    name: str
    method: str
    baseline: str
    candidate: str
    failed: bool
    reason: str = ""

    @property
    def verdict(self) -> str:
        return "regression" if self.failed else "pass"
