"""The ``ppl`` task's registration: what api, report and gate need to know about it.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from coca_eval.ppl.gate_hooks import perplexity_gate
from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

PPL_TASK_VERSION = 1

register_task(
    TaskSpec(
        name="ppl",
        version=PPL_TASK_VERSION,
        metric="ppl",
        lower_is_better=True,
        description="Sliding-window perplexity: one methods x lengths table (the paper's Table 1).",
        make_params=lazy("coca_eval.ppl.params:make_params"),
        preset_params="coca_eval.ppl.params:PplPresetParams",
        make_runner=lazy("coca_eval.ppl.task:PplTask"),
        finish=lazy("coca_eval.ppl.task:record_documents"),
        check=lazy("coca_eval.ppl.task:check_params"),
        combine=lazy("coca_eval.ppl.task:combine_cell"),
        command="coca_eval.cli.ppl:ppl",
        report=ReportHooks(
            table_title="Perplexity by evaluation length",
            protocol=lazy("coca_eval.ppl.report:protocol_line"),
            interval=lazy("coca_eval.ppl.report:interval"),
            interval_note="Brackets: 95 % bootstrap interval, resampling documents.",
            units=lazy("coca_eval.ppl.report:units"),
            units_note="documents for perplexity",
            plots=lazy("coca_eval.ppl.plots:plot_hook"),
            views={
                "bpb": lazy("coca_eval.ppl.report:bpb_view"),
                "word_ppl": lazy("coca_eval.ppl.report:word_ppl_view"),
            },
        ),
        gate=perplexity_gate(
            lazy("coca_eval.ppl.gate:paired_test"),
            lazy("coca_eval.ppl.report:unit_ids"),
            "documents or their scored tokens",
            protocol_keys=("stride", "mode", "bos", "doc_tokens"),
            positions=lazy("coca_eval.ppl.gate:past_position_runs"),
        ),
    )
)
