"""The ``passkey`` task's registration (the paper's Table 2): accuracy in points, where results written
before coca-eval/3 hold a fraction, and a gate that pairs samples (their keys and depths) by McNemar.
"""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks, TaskSpec, register_task

PASSKEY_TASK_VERSION = 1
# lazy hooks (coca_eval.conventions): ``coca-eval --help`` imports this module
PASSKEY = TaskPackage("passkey")

register_task(
    TaskSpec(
        name="passkey",
        version=PASSKEY_TASK_VERSION,
        metric="accuracy",
        lower_is_better=False,
        description="Passkey retrieval at exact token lengths: accuracy per methods x lengths (Table 2).",
        unit="points",
        old_unit="fraction",  # results before coca-eval/3 (and journals) hold passkey accuracy 0-1
        **PASSKEY.spec(
            "make_params preset_params check shortest combine contradiction command",
            make_runner="task:PasskeyTask",
            finish="dump:dump_hook",
            points_detail="answer:detail_in_points",
        ),
        report=ReportHooks(
            **PASSKEY.report("protocol interval plots"),
            table_title="Passkey retrieval accuracy by prompt length",
            interval_note="Brackets: Wilson 95 % interval.",
            units_note="samples for passkey",
        ),
        gate=GateHooks(
            **PASSKEY.gate("test units"),
            tolerance=lambda options: options.max_acc_drop,  # points, as the cells
            effect=EffectKind("accuracy_drop", sign=-1),
            protocol_keys=("template", "max_new_tokens", "chat_template"),
            units_name="samples",
            units_differ="passkey samples (keys, depths)",
            strict_keys=("thinking", "think_budget", "think_markers", "reasoning_effort"),
        ),
    )
)
