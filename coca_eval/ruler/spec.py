"""The ``ruler`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.

Scale: a cell's value is RULER's task score, 0-100 (the mean per-sample score x 100, as RULER and its
ports print it), so tables read like RULER's. The gate works in the same points: its paired effect is
the drop in full-credit samples x 100, and ``--max-acc-drop`` is in points too
(:mod:`coca_eval.generation.spec`).
"""

from __future__ import annotations

from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.registry import lazy
from coca_eval.taskspec import register_task

RULER_TASK_VERSION = 1
RULER_METRIC = "score"

register_task(
    generation_spec(
        "ruler",
        version=RULER_TASK_VERSION,
        metric=RULER_METRIC,
        description="RULER's thirteen synthetic long-context tasks at exact token lengths: scores per "
        "methods x tasks x lengths and the effective context length.",
        make_params=lazy("coca_eval.ruler.replay:make_params"),
        preset_params="coca_eval.ruler.params:RulerPresetParams",
        make_runner=lazy("coca_eval.ruler.replay:make_runner"),
        finish=lazy("coca_eval.ruler.report:finish_hook"),
        contradiction=lazy("coca_eval.ruler.records:cell_contradiction"),
        config_model="coca_eval.ruler.records:RulerConfig",
        merged=lazy("coca_eval.ruler.report:merged_hook"),
        check=lazy("coca_eval.ruler.params:check_methods"),
        shortest=lazy("coca_eval.ruler.tasks:shortest_length"),
        command="coca_eval.cli.ruler:ruler",
        catalogue=lazy("coca_eval.ruler.tasks:catalogue"),
        definitions=lazy("coca_eval.ruler.tasks:definitions"),
        score_sample=lazy("coca_eval.ruler.scoring:score_sample"),
        console=lazy("coca_eval.ruler.report:console"),
        report=generation_report(
            "RULER",
            protocol=lazy("coca_eval.ruler.report:protocol_line"),
            tables=lazy("coca_eval.ruler.report:ruler_tables"),
            plots=lazy("coca_eval.ruler.plots:plot_hook"),
        ),
        gate=generation_gate(
            "RULER",
            protocol_keys=("haystack", "chat_template", "answer_budget", "length_counts"),
            units_mismatch=lazy("coca_eval.ruler.gate:samples_mismatch"),
            run_checks=lazy("coca_eval.ruler.gate:effective_length_checks"),
        ),
    )
)
