"""The ``lm-eval`` task's registration: lm-eval's perplexity tasks as imported (``coca-eval import
lm-eval``), under lm-eval's task and metric names, gated by the paired document test ppl uses.

There is no runner: these cells come only from lm-eval's own outputs. Imported by ``coca-eval --help``,
it imports nothing heavy.
"""

from __future__ import annotations

from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, TaskSpec, register_task

register_task(
    TaskSpec(
        name="lm-eval",
        version=1,
        metric="word_perplexity",
        lower_is_better=True,
        description="lm-evaluation-harness perplexity tasks, imported under their names.",
        contradiction=lazy("coca_eval.imported.harness_gate:contradiction"),
        gate=GateHooks(
            test=lazy("coca_eval.imported.harness_gate:paired_test"),
            tolerance=lambda options: options.max_ppl_rise,
            effect=EffectKind("ppl_ratio_minus_1", sign=1, percent=True),
            units=lazy("coca_eval.imported.harness_gate:document_ids"),
            units_name="documents",
            units_differ="documents (their hashes or word and byte counts)",
            min_p_value=lambda documents: 2.0**-documents,
            change_name="perplexity change",
            more_units_hint="lm-eval's --limit",
        ),
    )
)
