"""The tasks of imported lm-eval cells that keep lm-eval's names (``coca-eval import lm-eval``):
``lm-eval-perplexity`` for its perplexity tasks, gated by the paired document test ppl uses, and
``lm-eval`` for its other tasks (generation, multiple choice), whose per-sample scores are gated by
McNemar (0/1 scores) or a paired sample bootstrap (partial credit).

There is no runner: these cells come only from lm-eval's own outputs. Imported by ``coca-eval --help``,
it imports nothing heavy.
"""

from __future__ import annotations

from coca_eval.data.harness_logs import IMPORTERS
from coca_eval.ppl.gate_hooks import perplexity_gate
from coca_eval.registry import lazy
from coca_eval.taskspec import EffectKind, GateHooks, TaskSpec, register_task

IMPORTERS.add("lm-eval", lazy("coca_eval.imported.evaluation_harness:import_harness_dir"))

register_task(
    TaskSpec(
        name="lm-eval-perplexity",
        version=1,
        metric="word_perplexity",
        lower_is_better=True,
        description="lm-evaluation-harness perplexity tasks, imported under their names.",
        contradiction=lazy("coca_eval.imported.harness_gate:contradiction"),
        gate=perplexity_gate(
            lazy("coca_eval.imported.harness_gate:paired_test"),
            lazy("coca_eval.imported.harness_gate:document_ids"),
            "documents (their hashes or word and byte counts)",
            more_units_hint="lm-eval's --limit",
        ),
    )
)

register_task(
    TaskSpec(
        name="lm-eval",
        version=1,
        metric="exact_match",
        lower_is_better=False,
        description="lm-evaluation-harness tasks outside RULER's port, imported under their names.",
        contradiction=lazy("coca_eval.imported.harness_gate:mean_contradiction"),
        gate=GateHooks(
            test=lazy("coca_eval.imported.harness_gate:paired_score_test"),
            tolerance=lambda options: options.max_acc_drop,  # points: the test scales 0-1 scores
            effect=EffectKind("score_drop", sign=-1),
            units=lazy("coca_eval.imported.harness_gate:sample_ids"),
            units_name="samples",
            units_differ="samples (lm-eval's doc_id with its prompt and target hashes)",
            change_name="score drop",
            more_units_hint="lm-eval's --limit",
            dataset_names_row=True,
        ),
    )
)
