"""The ``longppl`` task's registration: LongPPL cells, run by ``coca-eval ppl --metric longppl``.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.ppl.hooks import perplexity_gate, perplexity_report
from coca_eval.taskspec import TaskSpec, register_task

# The run parameters that only decide which tokens are key: two runs may differ in them when their
# key tokens agree (the candidate scored with --key-tokens on the baseline's file), which the gate
# checks document by document (coca_eval.ppl.longppl.gate).
KEY_SOURCE_PARAMS = ("evaluator_model", "key_tokens", "short", "step", "bound", "margin")
LONGPPL = TaskPackage("longppl", "coca_eval.ppl.longppl")

register_task(
    TaskSpec(
        name="longppl",
        version=1,
        metric="longppl",
        lower_is_better=True,
        description="LongPPL: perplexity on the key tokens that need long context (ppl --metric longppl).",
        **LONGPPL.spec(
            "make_params",
            make_runner="task:LongPplTask",
            finish="coca_eval.ppl.task:record_documents",  # ppl's: the documents a run read
            check="task:check_longppl",
            combine="task:combine_longppl_cell",
        ),
        report=perplexity_report(
            "LongPPL (key-token perplexity)",
            **LONGPPL.report("protocol interval units"),
            interval_note="Brackets (LongPPL): 95 % bootstrap interval, resampling documents with their "
            "key-token NLL sums and counts; none where fewer than two documents hold a key token.",
            units_note="documents for LongPPL",
        ),
        gate=perplexity_gate(
            **LONGPPL.gate(
                "test", units="gate:unit_ids", units_mismatch="gate:key_sets_differ", notes="gate:notes"
            ),
            units_differ="documents or their key tokens",
            effect="longppl_ratio_minus_1",
            protocol_keys=("mode", "bos", "doc_tokens"),
            units_name="documents with key tokens",
            change_name="LongPPL change",
            unit_params=KEY_SOURCE_PARAMS,
        ),
    )
)
