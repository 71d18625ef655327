"""The gate's verdict for people (a rich table, a GitHub step-summary in Markdown) and for machines (JSON)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from coca_eval.gate.compare import NOT_SIGNIFICANT, SIGNIFICANT, WITHIN, CellVerdict, GateResult
from coca_eval.gate.runs import RunCheck
from coca_eval.lengths import format_length
from coca_eval.results import Cell
from coca_eval.tables import cell_text
from coca_eval.taskspec import EffectKind, spec_for

COLUMNS = ("cell", "method", "baseline", "candidate", "change", "95% CI", "p (Holm)", "verdict")


def headline(result: GateResult) -> str:
    verdicts = [c.verdict for c in result.cells] + [r.verdict for r in result.runs]
    counts = {v: verdicts.count(v) for v in ("regression", "pass", "inconclusive", "skipped")}
    word = "REGRESSION" if result.regressed else "INCONCLUSIVE" if result.inconclusive else "PASS"
    shown = f", {counts['inconclusive']} inconclusive" if counts["inconclusive"] else ""
    return f"coca-eval gate: {word} ({counts['regression']} regressed, {counts['pass']} passed{shown}, " + (
        f"{counts['skipped']} skipped; alpha {result.options.alpha:g}, max PPL rise "
        f"{result.options.max_ppl_rise:.1%}, max accuracy drop {result.options.max_acc_drop:g} points)"
    )


def summary_rows(result: GateResult) -> list[list[str]]:
    """One row per gated cell, then one per run-level check."""
    return [_row(verdict) for verdict in result.cells] + [_run_row(check) for check in result.runs]


def rich_summary(result: GateResult, width: int | None = None) -> Table:
    """The terminal's table. Where the full table is wider than ``width`` (an 80-column terminal, a CI
    log), the narrow layout: the method under its cell, the change over its interval, each reason
    below the table, so no number or verdict is ever split across lines."""
    wide = _wide_table(result)
    if width is None or Console(width=1000).measure(wide).maximum <= width:
        return wide
    return _narrow_table(result)


def _styled_verdict(verdict: str, text: str) -> str:
    style = {"regression": "bold red", "pass": "green", "inconclusive": "yellow"}.get(verdict, "dim")
    return f"[{style}]{text}[/{style}]"


def _verdicts(result: GateResult) -> list[str]:
    return [c.verdict for c in result.cells] + [r.verdict for r in result.runs]


def _wide_table(result: GateResult) -> Table:
    table = Table(title=headline(result), title_justify="left")
    for column in COLUMNS:
        justify = "left" if column in ("cell", "method", "verdict") else "right"
        table.add_column(column, justify=justify, overflow="fold")  # never cut a name or a number
    for verdict, row in zip(_verdicts(result), summary_rows(result), strict=True):
        table.add_row(*row[:-1], _styled_verdict(verdict, row[-1]))
    return table


def _narrow_table(result: GateResult) -> Table:
    table = Table(title=headline(result), title_justify="left", caption_justify="left")
    table.add_column("cell / method", overflow="fold", ratio=1)
    for column in ("base -> cand", "change, 95% CI", "p (Holm)", "verdict"):
        table.add_column(column, justify="left" if column == "verdict" else "right", no_wrap=True)
    reasons = []
    for verdict, row in zip(_verdicts(result), summary_rows(result), strict=True):
        cell, method, base, cand, change, interval, p_text, text = row
        word, _, reason = text.partition(": ")
        if reason:
            reasons.append(f"{cell} ({method}): {reason}")
        values = f"{base} -> {cand}" if base or cand else ""
        table.add_row(f"{cell}\n{method}", values, "\n".join(filter(None, (change, interval))), p_text,
                      _styled_verdict(verdict, word))  # fmt: skip
    table.caption = "\n".join(reasons) or None
    return table


def markdown_summary(result: GateResult) -> str:
    frame = pd.DataFrame(summary_rows(result), columns=list(COLUMNS))
    notes = "".join(f"\n> {note}\n" for note in result.notes)
    table = frame.to_markdown(index=False, disable_numparse=True)
    return f"### {headline(result)}\n\n{table}\n{notes}"


def append_step_summary(result: GateResult) -> Path | None:
    """GitHub Actions shows whatever a step appends to ``$GITHUB_STEP_SUMMARY`` on the run's page."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(markdown_summary(result) + "\n")
    return Path(target)


def verdict_json(result: GateResult) -> dict[str, Any]:
    options = result.options
    return {
        "verdict": "regression" if result.regressed else "inconclusive" if result.inconclusive else "pass",
        "failed": result.failed,
        "exit_code": result.exit_code,
        "alpha": options.alpha,
        "max_ppl_rise": options.max_ppl_rise,
        "max_acc_drop": options.max_acc_drop,
        "max_acc_drop_unit": "points",
        "seed": options.seed,
        "bootstrap": options.n_boot,
        "notes": result.notes,
        "cells": [_cell_json(v) for v in result.cells],
        "runs": [_run_json(check) for check in result.runs],
    }


def _run_json(check: RunCheck) -> dict[str, Any]:
    return {
        "task": check.task,
        "check": check.name,
        "method": check.method,
        "baseline": check.baseline,
        "candidate": check.candidate,
        "verdict": check.verdict,
        "reason": check.reason,
    }


def _run_row(check: RunCheck) -> list[str]:
    word = "REGRESSION" if check.failed else "pass"
    verdict = f"{word}: {check.reason}" if check.reason else word
    return [f"{check.task} {check.name}", check.method, check.baseline, check.candidate, "", "", "", verdict]


def _cell_json(verdict: CellVerdict) -> dict[str, Any]:
    base, cand, result = verdict.pair.base, verdict.pair.cand, verdict.result
    return {
        "task": base.task,
        "metric": base.metric,
        "method": base.method,
        "candidate_method": cand.method,
        "length": base.length,
        "dataset": base.dataset,
        "baseline": {"value": base.value, "status": base.status},
        "candidate": {"value": cand.value, "status": cand.status},
        "effect": verdict.value_change if result is None else result.effect,
        "effect_kind": _effect(base).name if _effect(base) else None,
        "interval": None if result is None else [result.low, result.high],
        "p_value": None if result is None else result.p_value,
        "p_adjusted": verdict.p_adjusted,
        "units": verdict.units,
        "verdict": verdict.verdict,
        "reason": verdict.reason,
    }


def _row(verdict: CellVerdict) -> list[str]:
    base, cand, result = verdict.pair.base, verdict.pair.cand, verdict.result
    method = base.method if base.method == cand.method else f"{base.method} -> {cand.method}"
    where = format_length(base.length) if base.length is not None else str(base.dataset)
    if base.length is not None and base.dataset and _names_dataset(base.task):
        where = f"{base.dataset} {where}"  # RULER's niah_single_1 at 1k, not "ruler 1k" once per task
    change = interval = p_text = ""
    if result is not None:
        effect = _effect(base)
        change = effect.text(result.effect)
        low, high = sorted((result.low, result.high), key=lambda x: effect.sign * x)
        interval = f"[{effect.text(low)}, {effect.text(high)}]"
        p_text = f"{verdict.p_adjusted:.3g}"
    elif verdict.value_change is not None:
        change = _effect(base).text(verdict.value_change)
    return [
        f"{base.task} {where}",
        method,
        cell_text(base),
        cell_text(cand),
        change,
        interval,
        p_text,
        _verdict(verdict),
    ]


def _names_dataset(task: str) -> bool:
    from coca_eval.taskspec import spec_for

    hooks = spec_for(task).gate if task else None
    return bool(hooks is not None and hooks.dataset_names_row)


def _verdict(verdict: CellVerdict) -> str:
    """``pass``, ``pass (not significant)``, ``REGRESSION``, ``skipped: baseline is OOM``, ..."""
    word = verdict.verdict.upper() if verdict.verdict in ("regression", "inconclusive") else verdict.verdict
    if verdict.reason in ("", WITHIN, SIGNIFICANT):
        return word
    if verdict.reason == NOT_SIGNIFICANT:
        return f"{word} (not significant)"
    return f"{word}: {verdict.reason}"


def _effect(cell: Cell) -> EffectKind | None:
    """How the cell's task prints a paired effect (None: the task has no paired test)."""
    hooks = spec_for(cell.task, cell.metric).gate
    return hooks.effect if hooks is not None else None
