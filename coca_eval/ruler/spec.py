"""The ``ruler`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.

Scale: a cell's value is RULER's task score, 0-100 (the mean per-sample score x 100, as RULER and its
ports print it), so tables read like RULER's. The gate works in the same points: its paired effect is
the drop in full-credit samples x 100, and ``--max-acc-drop`` (a fraction, passkey's) is read x 100.
"""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, ReportHooks, TaskSpec, register_task

RULER_TASK_VERSION = 1
RULER_METRIC = "score"

register_task(
    TaskSpec(
        name="ruler",
        version=RULER_TASK_VERSION,
        metric=RULER_METRIC,
        lower_is_better=False,
        description="RULER's thirteen synthetic long-context tasks at exact token lengths: scores per "
        "methods x tasks x lengths and the effective context length.",
        make_params=lazy("coca_eval.ruler.replay:make_params"),
        preset_params="coca_eval.ruler.params:RulerPresetParams",
        make_runner=lazy("coca_eval.ruler.replay:make_runner"),
        finish=lazy("coca_eval.ruler.report:finish_hook"),
        combine=lazy("coca_eval.generation.cells:combine_cell"),
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
        report=ReportHooks(
            table_title="RULER score by task and length",
            protocol=lazy("coca_eval.ruler.report:protocol_line"),
            interval=lazy("coca_eval.generation.report:interval"),
            interval_note="Brackets: Wilson 95 % score interval on the mean sample score.",
            units_note="samples for RULER",
            tables=lazy("coca_eval.ruler.report:ruler_tables"),
            plots=lazy("coca_eval.ruler.plots:plot_hook"),
        ),
        gate=GateHooks(
            test=lazy("coca_eval.generation.gate:paired_test"),
            tolerance=lambda options: 100 * options.max_acc_drop,
            effect=EffectKind("score_drop", sign=-1),
            protocol_keys=("haystack", "chat_template", "answer_budget"),
            units=lazy("coca_eval.generation.report:unit_ids"),
            units_name="samples",
            units_differ="RULER samples (their references)",
            units_mismatch=lazy("coca_eval.ruler.gate:samples_mismatch"),
            run_checks=lazy("coca_eval.ruler.gate:effective_length_checks"),
            dataset_names_row=True,
        ),
    )
)
