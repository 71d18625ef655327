"""The ``opencompass`` task's registration: Table 5 layout in reports, no paired test in the gate.

OpenCompass runs as a subprocess through its own command (``coca-eval opencompass``), so there is no
cell runner here; imported by ``coca-eval --help``, it imports nothing of the bridge.
"""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

register_task(
    TaskSpec(
        name="opencompass",
        version=1,
        metric="accuracy",
        lower_is_better=False,
        description="Short-context benchmarks through OpenCompass (the paper's Table 5).",
        command="coca_eval.cli.opencompass:opencompass",
        unit="points",  # OpenCompass prints its accuracies 0-100
        preset_params="coca_eval.opencompass.params:OpenCompassPresetParams",
        report=ReportHooks(
            tables=lazy("coca_eval.opencompass.report:opencompass_tables"), plots=lambda c, x: []
        ),
    )
)
