"""The ``babilong`` task's registration. Imported by ``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks, TaskSpec, register_task

BABILONG_TASK_VERSION = 1
BABILONG_METRIC = "accuracy"

register_task(
    TaskSpec(
        name="babilong",
        version=BABILONG_TASK_VERSION,
        metric=BABILONG_METRIC,
        lower_is_better=False,
        description="BABILong: bAbI reasoning tasks with their facts spread through book text, at exact "
        "token lengths or on BABILong's prepared sets: accuracy per task and length, effective length.",
        make_params=lazy("coca_eval.babilong.params:make_babilong_params"),
        preset_params="coca_eval.babilong.params:BabilongPresetParams",
        make_runner=lazy("coca_eval.babilong.task:BabilongRunner"),
        finish=lazy("coca_eval.babilong.report:finish_hook"),
        combine=lazy("coca_eval.generation.cells:combine_cell"),
        contradiction=lazy("coca_eval.babilong.report:cell_contradiction"),
        merged=lazy("coca_eval.babilong.report:merged_hook"),
        check=lazy("coca_eval.babilong.params:check_methods"),
        shortest=lazy("coca_eval.babilong.params:shortest_length"),
        command="coca_eval.cli.babilong:babilong",
        report=ReportHooks(
            table_title="BABILong accuracy by task and length",
            protocol=lazy("coca_eval.babilong.report:protocol_line"),
            interval=lazy("coca_eval.generation.report:interval"),
            interval_note="Brackets: Wilson 95 % score interval on the accuracy.",
            units_note="samples for BABILong",
            tables=lazy("coca_eval.babilong.report:babilong_tables"),
            plots=lazy("coca_eval.babilong.plots:plot_hook"),
        ),
        gate=GateHooks(
            test=lazy("coca_eval.generation.gate:paired_test"),
            tolerance=lambda options: 100 * options.max_acc_drop,
            effect=EffectKind("accuracy_drop", sign=-1),
            protocol_keys=("source", "prompt_parts", "chat_template", "answer_budget"),
            units=lazy("coca_eval.generation.report:unit_ids"),
            units_name="samples",
            units_differ="BABILong samples (their targets)",
            run_checks=lazy("coca_eval.babilong.report:effective_length_checks"),
            dataset_names_row=True,
        ),
    )
)
