"""The hooks every perplexity-like task shares (``ppl``, ``longppl``, lm-eval's imported perplexity
tasks). In the gate: a paired test over documents whose effect is the candidate's perplexity ratio
minus 1, held to ``--max-ppl-rise``, and the note when too few documents make even the exact
sign-flip test's smallest p-value too big. In the report of ``ppl`` and ``longppl``: a table by
evaluation length.

Imported by ``coca-eval --help`` through those specs: it imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks


def perplexity_report(title: str, **own: Any) -> ReportHooks:
    """The report hooks of a perplexity-like task whose table is called ``title`` (by evaluation
    length); ``own`` adds its protocol caption, intervals and the documents its ``n`` counts."""
    return ReportHooks(table_title=f"{title} by evaluation length", **own)


def perplexity_gate(
    test: Callable, units: Callable, units_differ: str, effect: str = "ppl_ratio_minus_1", **own: Any
) -> GateHooks:
    """A perplexity-like task's gate hooks: its ``test``, its documents (``units``, and what differs
    when they do) and anything else it adds or replaces in ``own`` (LongPPL's ``units_name``)."""
    hooks = GateHooks(
        test=test,
        tolerance=lambda options: options.max_ppl_rise,
        effect=EffectKind(effect, sign=1, percent=True),
        units=units,
        units_name="documents",
        units_differ=units_differ,
        min_p_value=lambda documents: 2.0**-documents,  # the exact sign-flip test's floor
        change_name="perplexity change",
        more_units_hint="--num-docs",
    )
    return replace(hooks, **own)
