"""The ``helmet`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.

Scale: a cell's value is its task's metric (substring exact match, RULER recall, NDCG@10, exact
match, ROUGE-L F1) averaged over samples x 100, as HELMET's tables print it. The gate pairs samples as
for RULER (full credit per sample, McNemar) in the same points (:mod:`coca_eval.generation.spec`).
"""

from __future__ import annotations

from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.registry import lazy
from coca_eval.taskspec import register_task

HELMET_TASK_VERSION = 1
HELMET_METRIC = "score"

register_task(
    generation_spec(
        "helmet",
        version=HELMET_TASK_VERSION,
        metric=HELMET_METRIC,
        description="HELMET's model-development tasks (recall; RAG, re-rank, ICL, long QA and summarisation "
        "with their data) at exact token lengths: scores per methods x tasks x lengths, category averages "
        "and effective lengths.",
        make_params=lazy("coca_eval.helmet.params:make_helmet_params"),
        preset_params="coca_eval.helmet.params:HelmetPresetParams",
        make_runner=lazy("coca_eval.helmet.task:HelmetRunner"),
        finish=lazy("coca_eval.helmet.report:finish_hook"),
        contradiction=lazy("coca_eval.helmet.records:cell_contradiction"),
        config_model="coca_eval.helmet.records:HelmetConfig",
        merged=lazy("coca_eval.helmet.report:merged_hook"),
        check=lazy("coca_eval.helmet.params:check_methods"),
        shortest=lazy("coca_eval.lengths:shortest_answered"),
        command="coca_eval.cli.helmet:helmet",
        catalogue=lazy("coca_eval.helmet.tasks:catalogue"),
        console=lazy("coca_eval.helmet.report:console"),
        report=generation_report(
            "HELMET",
            protocol=lazy("coca_eval.helmet.report:protocol_line"),
            tables=lazy("coca_eval.helmet.report:helmet_tables"),
            plots=lazy("coca_eval.helmet.report:plot_hook"),
        ),
        gate=generation_gate(
            "HELMET",
            protocol_keys=("protocol", "chat_template", "answer_budget"),
            run_checks=lazy("coca_eval.helmet.gate:effective_length_checks"),
        ),
    )
)
