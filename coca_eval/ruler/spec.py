"""The ``ruler`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.

Scale: a cell's value is RULER's task score, 0-100 (the mean per-sample score x 100, as RULER and its
ports print it), so tables read like RULER's. The gate works in the same points: its paired effect is
the drop in full-credit samples x 100, and ``--max-acc-drop`` is in points too
(:mod:`coca_eval.generation.spec`).
"""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.taskspec import register_task

RULER_TASK_VERSION = 1
RULER_METRIC = "score"
RULER = TaskPackage("ruler")

register_task(
    generation_spec(
        "ruler",
        version=RULER_TASK_VERSION,
        metric=RULER_METRIC,
        description="RULER's thirteen synthetic long-context tasks at exact token lengths: scores per "
        "methods x tasks x lengths and the effective context length.",
        **RULER.spec(
            "preset_params finish contradiction config_model merged check command catalogue definitions "
            "score_sample console",
            make_params="replay:make_params",  # a replayed run's parameters, or the usual ones
            make_runner="replay:make_runner",
            shortest="tasks:shortest_length",
        ),
        report=generation_report("RULER", **RULER.report("protocol tables plots")),
        gate=generation_gate(
            "RULER",
            **RULER.gate("run_checks", units_mismatch="gate:samples_mismatch"),
            protocol_keys=("haystack", "chat_template", "answer_budget", "length_counts"),
        ),
    )
)
