"""The ``babilong`` task's registration. Imported by ``coca-eval --help``: every hook is lazy.

BABILong reads as the other generation families do (:mod:`coca_eval.generation.spec`) but names its
score accuracy, as BABILong's tables do."""

from __future__ import annotations

from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, register_task

BABILONG_TASK_VERSION = 2  # 2: generate's questions drawn in a seeded order, not file order
BABILONG_METRIC = "accuracy"

register_task(
    generation_spec(
        "babilong",
        version=BABILONG_TASK_VERSION,
        metric=BABILONG_METRIC,
        description="BABILong: bAbI reasoning tasks with their facts spread through book text, at exact "
        "token lengths or on BABILong's prepared sets: accuracy per task and length, effective length.",
        make_params=lazy("coca_eval.babilong.params:make_babilong_params"),
        preset_params="coca_eval.babilong.params:BabilongPresetParams",
        make_runner=lazy("coca_eval.babilong.task:BabilongRunner"),
        finish=lazy("coca_eval.babilong.report:finish_hook"),
        contradiction=lazy("coca_eval.babilong.report:cell_contradiction"),
        merged=lazy("coca_eval.babilong.report:merged_hook"),
        check=lazy("coca_eval.babilong.params:check_methods"),
        shortest=lazy("coca_eval.babilong.params:shortest_length"),
        command="coca_eval.cli.babilong:babilong",
        console=lazy("coca_eval.babilong.report:console"),
        report=generation_report(
            "BABILong",
            table_title="BABILong accuracy by task and length",
            protocol=lazy("coca_eval.babilong.report:protocol_line"),
            interval_note="Brackets: Wilson 95 % score interval on the accuracy, its n the effective number "
            "of samples (questions of one bAbI story counted as a cluster).",
            tables=lazy("coca_eval.babilong.report:babilong_tables"),
            plots=lazy("coca_eval.babilong.plots:plot_hook"),
        ),
        gate=generation_gate(
            "BABILong",
            effect=EffectKind("accuracy_drop", sign=-1),
            protocol_keys=("source", "prompt_parts", "chat_template", "answer_budget"),
            units_differ="BABILong samples (their targets)",
            run_checks=lazy("coca_eval.babilong.report:effective_length_checks"),
        ),
    )
)
