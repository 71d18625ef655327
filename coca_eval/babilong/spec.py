"""The ``babilong`` task's registration. Imported by ``coca-eval --help``: every hook is lazy.

BABILong reads as the other generation families do (:mod:`coca_eval.generation.spec`) but names its
score accuracy, as BABILong's tables do."""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.taskspec import EffectKind, register_task

BABILONG_TASK_VERSION = 2  # 2: generate's questions drawn in a seeded order, not file order
BABILONG_METRIC = "accuracy"
BABILONG = TaskPackage("babilong")

register_task(
    generation_spec(
        "babilong",
        version=BABILONG_TASK_VERSION,
        metric=BABILONG_METRIC,
        description="BABILong: bAbI reasoning tasks with their facts spread through book text, at exact "
        "token lengths or on BABILong's prepared sets: accuracy per task and length, effective length.",
        **BABILONG.spec(
            "make_params preset_params make_runner finish merged check shortest command console",
            contradiction="report:cell_contradiction",
        ),
        report=generation_report(
            "BABILong",
            **BABILONG.report("protocol tables plots"),
            table_title="BABILong accuracy by task and length",
            interval_note="Brackets: Wilson 95 % score interval on the accuracy, its n the effective number "
            "of samples (questions of one bAbI story counted as a cluster).",
        ),
        gate=generation_gate(
            "BABILong",
            **BABILONG.gate(run_checks="report:effective_length_checks"),
            effect=EffectKind("accuracy_drop", sign=-1),
            protocol_keys=("source", "prompt_parts", "chat_template", "answer_budget"),
            units_differ="BABILong samples (their targets)",
        ),
    )
)
