"""The analyses' registrations: four tasks under ``coca-eval analyze``.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from functools import partial

from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

ANALYSES = {  # name -> (metric, lower is better, description, table title)
    "frequencies": (
        "low_quarter_share",
        False,
        "RoPE frequency usage: mean 2-norm of q, k, v per rotary plane, per layer and head (p-RoPE Fig 3-4).",
        "Share of q/k norm in the lowest quarter of RoPE frequencies",
    ),
    "angles": (
        "anomalous_share",
        True,
        "Initial q-k angles per plane and the share of triples in CoCA's anomalous regime (§2.2).",
        "Share of (query, key, plane) triples with initial angle above pi",
    ),
    "decay": (
        "logit_drop",
        False,
        "Long-term decay: RoFormer/CoCA bounds, all-ones vs Gaussian q/k, against the measured logit.",
        "Measured mean logit at distance 1..16 minus at the farthest bin",
    ),
    "attention": (
        "max_logit",
        True,
        "Attention logits past the trained length: max logit and local mass per layer and head (CoCA v1).",
        "Largest attention logit over layers and heads",
    ),
}


def _register(name: str, metric: str, lower: bool, description: str, title: str) -> None:
    register_task(
        TaskSpec(
            name=name,
            version=1,
            metric=metric,
            lower_is_better=lower,
            description=description,
            make_params=partial(lazy("coca_eval.analyses.params:make_params"), name),
            make_runner=partial(lazy("coca_eval.analyses.task:make_runner"), name),
            combine=lazy("coca_eval.analyses.task:combine_cell"),
            command=f"coca_eval.cli.analyses:{name}",
            group="analyze",
            report=ReportHooks(
                table_title=title,
                protocol=lazy("coca_eval.analyses.report:protocol_line"),
                plots=lazy(f"coca_eval.analyses.plots_{name}:plot_hook"),
                tables=lazy("coca_eval.analyses.tables:frequency_tables") if name == "frequencies" else None,
                section="Analyses",
            ),
        )
    )


for _name, _entry in ANALYSES.items():
    _register(_name, *_entry)
