"""The tasks of imported lm-eval cells that keep lm-eval's names (``coca-eval import lm-eval``):
``lm-eval-perplexity`` for its perplexity tasks, gated by the paired document test ppl uses, and
``lm-eval`` for its other tasks (generation, multiple choice), whose per-sample scores are gated by
McNemar (0/1 scores) or a paired sample bootstrap (partial credit).

There is no runner: these cells come only from lm-eval's own outputs. Imported by ``coca-eval --help``,
it imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import replace

from coca_eval.conventions import TaskPackage
from coca_eval.data.harness_logs import IMPORTERS
from coca_eval.ppl.hooks import perplexity_gate
from coca_eval.taskspec import EffectKind, GateHooks, TaskSpec, register_task

IMPORTED = TaskPackage("lm-eval", "coca_eval.imported")
IMPORTERS.add("lm-eval", IMPORTED.lazy("evaluation_harness:import_harness_dir"))


def _register(
    name: str, metric: str, lower_is_better: bool, description: str, contradiction: str, gate: GateHooks
) -> None:
    """One task of lm-eval's cells, checked (``contradiction`` names the check) and gated by
    :mod:`coca_eval.imported.harness_gate`. It has no runner: its cells come only from lm-eval's own
    outputs, so more of its units come from lm-eval's ``--limit``."""
    register_task(
        TaskSpec(
            name=name,
            version=1,
            metric=metric,
            lower_is_better=lower_is_better,
            description=description,
            contradiction=IMPORTED.lazy(f"harness_gate:{contradiction}"),
            gate=replace(gate, more_units_hint="lm-eval's --limit"),
        )
    )


_register(
    "lm-eval-perplexity",
    "word_perplexity",
    lower_is_better=True,
    description="lm-evaluation-harness perplexity tasks, imported under their names.",
    contradiction="contradiction",
    gate=perplexity_gate(
        **IMPORTED.gate(test="harness_gate:paired_test", units="harness_gate:document_ids"),
        units_differ="documents (their hashes or word and byte counts)",
    ),
)
_register(
    "lm-eval",
    "exact_match",
    lower_is_better=False,
    description="lm-evaluation-harness tasks outside RULER's port, imported under their names.",
    contradiction="mean_contradiction",
    gate=GateHooks(
        **IMPORTED.gate(test="harness_gate:paired_score_test", units="harness_gate:sample_ids"),
        tolerance=lambda options: options.max_acc_drop,  # points: the test scales 0-1 scores
        effect=EffectKind("score_drop", sign=-1),
        units_name="samples",
        units_differ="samples (lm-eval's doc_id with its prompt and target hashes)",
        change_name="score drop",
        dataset_names_row=True,
    ),
)
