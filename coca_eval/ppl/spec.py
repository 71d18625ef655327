"""The ``ppl`` task's registration (the paper's Table 1): sliding-window perplexity with its ``bpb`` and
``word_ppl`` views, gated by the paired document test of every perplexity-like task
(:mod:`coca_eval.ppl.hooks`), from any position in the window on (``gate --from-position``).
"""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.ppl.hooks import perplexity_gate, perplexity_report
from coca_eval.taskspec import TaskSpec, register_task

PPL_TASK_VERSION = 1
# lazy hooks (coca_eval.conventions): ``coca-eval --help`` imports this module
PPL = TaskPackage("ppl")

register_task(
    TaskSpec(
        name="ppl",
        version=PPL_TASK_VERSION,
        metric="ppl",
        lower_is_better=True,
        description="Sliding-window perplexity: one methods x lengths table (the paper's Table 1).",
        **PPL.spec(
            "preset_params combine command",
            make_params="params:make_params",
            make_runner="task:PplTask",
            finish="task:record_documents",
            check="task:check_params",
        ),
        report=perplexity_report(
            "Perplexity",
            **PPL.report("protocol interval units plots"),
            interval_note="Brackets: 95 % bootstrap interval, resampling documents.",
            units_note="documents for perplexity",
            views={"bpb": PPL.lazy("report:bpb_view"), "word_ppl": PPL.lazy("report:word_ppl_view")},
        ),
        gate=perplexity_gate(
            **PPL.gate("test units", positions="gate:past_position_runs"),
            units_differ="documents or their scored tokens",
            protocol_keys=("stride", "mode", "bos", "doc_tokens"),
        ),
    )
)
