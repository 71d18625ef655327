"""The ``longppl`` task's registration: LongPPL cells, run by ``coca-eval ppl --metric longppl``.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from coca_eval.ppl.gate_hooks import perplexity_gate
from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

# The run parameters that only decide which tokens are key: two runs may differ in them when their
# key tokens agree (the candidate scored with --key-tokens on the baseline's file), which the gate
# checks document by document (coca_eval.ppl.longppl.gate).
KEY_SOURCE_PARAMS = ("evaluator_model", "key_tokens", "short", "step", "bound", "margin")

register_task(
    TaskSpec(
        name="longppl",
        version=1,
        metric="longppl",
        lower_is_better=True,
        description="LongPPL: perplexity on the key tokens that need long context (ppl --metric longppl).",
        make_params=lazy("coca_eval.ppl.longppl.params:make_longppl_params"),
        make_runner=lazy("coca_eval.ppl.longppl.task:LongPplTask"),
        finish=lazy("coca_eval.ppl.task:record_documents"),
        check=lazy("coca_eval.ppl.longppl.task:check_longppl"),
        combine=lazy("coca_eval.ppl.longppl.task:combine_longppl_cell"),
        report=ReportHooks(
            table_title="LongPPL (key-token perplexity) by evaluation length",
            protocol=lazy("coca_eval.ppl.longppl.report:protocol_line"),
            interval=lazy("coca_eval.ppl.longppl.report:interval"),
            interval_note="Brackets (LongPPL): 95 % bootstrap interval, resampling documents with their "
            "key-token NLL sums and counts; none where fewer than two documents hold a key token.",
            units=lazy("coca_eval.ppl.longppl.report:units"),
            units_note="documents for LongPPL",
        ),
        gate=perplexity_gate(
            lazy("coca_eval.ppl.longppl.gate:paired_test"),
            lazy("coca_eval.ppl.longppl.gate:unit_ids"),
            "documents or their key tokens",
            effect="longppl_ratio_minus_1",
            protocol_keys=("mode", "bos", "doc_tokens"),
            units_name="documents with key tokens",
            change_name="LongPPL change",
            unit_params=KEY_SOURCE_PARAMS,
            units_mismatch=lazy("coca_eval.ppl.longppl.gate:key_sets_differ"),
            notes=lazy("coca_eval.ppl.longppl.gate:notes"),
        ),
    )
)
