"""The ``passkey`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks, TaskSpec, register_task

PASSKEY_TASK_VERSION = 1

register_task(
    TaskSpec(
        name="passkey",
        version=PASSKEY_TASK_VERSION,
        metric="accuracy",
        lower_is_better=False,
        description="Passkey retrieval at exact token lengths: accuracy per methods x lengths (Table 2).",
        make_params=lazy("coca_eval.passkey.params:make_passkey_params"),
        preset_params="coca_eval.passkey.params:PasskeyPresetParams",
        make_runner=lazy("coca_eval.passkey.task:PasskeyTask"),
        finish=lazy("coca_eval.passkey.dump:dump_hook"),
        combine=lazy("coca_eval.passkey.task:combine_cell"),
        contradiction=lazy("coca_eval.passkey.records:cell_contradiction"),
        unit="points",
        old_unit="fraction",  # results before coca-eval/3 (and journals) hold passkey accuracy 0-1
        points_detail=lazy("coca_eval.passkey.answer:detail_in_points"),
        check=lazy("coca_eval.passkey.params:check_methods"),
        shortest=lazy("coca_eval.passkey.params:shortest_length"),
        command="coca_eval.cli.passkey:passkey",
        report=ReportHooks(
            table_title="Passkey retrieval accuracy by prompt length",
            protocol=lazy("coca_eval.passkey.report:protocol_line"),
            interval=lazy("coca_eval.passkey.report:interval"),
            interval_note="Brackets: Wilson 95 % interval.",
            units_note="samples for passkey",
            plots=lazy("coca_eval.passkey.plots:plot_hook"),
        ),
        gate=GateHooks(
            test=lazy("coca_eval.passkey.gate:paired_test"),
            tolerance=lambda options: options.max_acc_drop,  # points, as the cells
            effect=EffectKind("accuracy_drop", sign=-1),
            protocol_keys=("template", "max_new_tokens", "chat_template"),
            units=lazy("coca_eval.passkey.report:unit_ids"),
            units_name="samples",
            units_differ="passkey samples (keys, depths)",
            strict_keys=("thinking", "think_budget", "think_markers", "reasoning_effort"),
        ),
    )
)
