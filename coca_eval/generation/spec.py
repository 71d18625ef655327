"""What every generation family's spec has in common, so that a family's ``spec.py`` states only its
own hooks: cells combined from per-sample parts, scores 0-100 with higher better, Wilson intervals on
the mean sample score, and the gate's paired full-credit test in the same points (``--max-acc-drop``,
points too) on samples named by their references. Runs with different thinking settings, or judged
by different judges, never pair: those keys are strict (absent on one side is a difference).

Imported by ``coca-eval --help`` through the families' specs: every hook is a lazy reference.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks, TaskSpec


def generation_report(title: str, **own: Any) -> ReportHooks:
    """The report hooks of the family called ``title`` in tables; ``own`` adds its protocol caption,
    tables and plots, or replaces a default (BABILong's interval note names its accuracy)."""
    hooks = ReportHooks(
        table_title=f"{title} score by task and length",
        interval=lazy("coca_eval.generation.report:interval"),
        interval_note="Brackets: Wilson 95 % score interval on the mean sample score.",
        units_note=f"samples for {title}",
    )
    if own.get("tables") is not None:
        own["tables"] = _with_thought_notes(own["tables"])
    return replace(hooks, **own)


def _with_thought_notes(tables):
    """A family's ``tables`` hook whose first table also carries the share of samples cut in thought
    (:func:`~coca_eval.generation.report.thought_notes`; nothing for a run without thoughts)."""

    def noted(cells, definition=None, runs=()):
        from coca_eval.generation.report import thought_notes

        made = tables(cells, definition, runs)
        if made:
            made[0].notes = [*made[0].notes, *thought_notes(cells)]
        return made

    return noted


def generation_gate(title: str, **own: Any) -> GateHooks:
    """The gate hooks of the family called ``title``: McNemar on full-credit samples; ``own`` adds its
    run checks or replaces a default (the protocol keys that make two runs comparable)."""
    hooks = GateHooks(
        test=lazy("coca_eval.generation.gate:paired_test"),
        tolerance=lambda options: options.max_acc_drop,
        effect=EffectKind("score_drop", sign=-1),
        protocol_keys=("chat_template", "answer_budget"),
        units=lazy("coca_eval.generation.report:unit_ids"),
        units_name="samples",
        units_differ=f"{title} samples (their references)",
        dataset_names_row=True,
        # see coca_eval.generation.thinking and coca_eval.judging
        strict_keys=("thinking", "think_budget", "think_markers", "reasoning_effort", "judge"),
    )
    return replace(hooks, **own)


def generation_spec(
    name: str, *, version: int, description: str, metric: str = "score", **hooks: Any
) -> TaskSpec:
    """A generation family's spec: ``hooks`` are its own :class:`~coca_eval.taskspec.TaskSpec` fields
    (runner, parameters, report and gate hooks from :func:`generation_report` and
    :func:`generation_gate`); cells combine from the base's per-sample parts."""
    return TaskSpec(
        name=name,
        version=version,
        metric=metric,
        lower_is_better=False,
        description=description,
        combine=lazy("coca_eval.generation.cells:combine_cell"),
        unit="points",
        **hooks,
    )
