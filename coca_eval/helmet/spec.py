"""The ``helmet`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.

Scale: a cell's value is its task's metric (substring exact match, RULER recall, NDCG@10, exact
match, ROUGE-L F1) averaged over samples x 100, as HELMET's tables print it. The gate pairs samples as
for RULER (full credit per sample, McNemar) in the same points (:mod:`coca_eval.generation.spec`).
"""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.taskspec import register_task

HELMET_TASK_VERSION = 1
HELMET_METRIC = "score"
HELMET = TaskPackage("helmet")

register_task(
    generation_spec(
        "helmet",
        version=HELMET_TASK_VERSION,
        metric=HELMET_METRIC,
        description="HELMET's model-development tasks (recall; RAG, re-rank, ICL, long QA and summarisation "
        "with their data) at exact token lengths: scores per methods x tasks x lengths, category averages "
        "and effective lengths.",
        **HELMET.spec(
            "make_params preset_params make_runner finish contradiction config_model merged check command "
            "catalogue console",
            shortest="coca_eval.lengths:shortest_answered",
        ),
        report=generation_report("HELMET", **HELMET.report("protocol tables", plots="report:plot_hook")),
        gate=generation_gate(
            "HELMET",
            **HELMET.gate("run_checks"),
            protocol_keys=("protocol", "chat_template", "answer_budget"),
        ),
    )
)
