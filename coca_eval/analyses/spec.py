"""The analyses' registrations: four tasks under ``coca-eval analyze``.

Imported by ``coca-eval --help``, so every hook is a lazy reference to its implementation.
"""

from __future__ import annotations

from functools import partial

from coca_eval.registry import lazy
from coca_eval.taskspec import ReportHooks, TaskSpec, register_task

ANALYSES = {  # name -> (metric, lower is better, description, table title)
    "decay": (
        "logit_drop",
        False,
        "Long-term decay: RoFormer/CoCA bounds, all-ones vs Gaussian q/k, against the measured logit.",
        "Measured mean logit at distance 1..16 minus at the farthest bin",
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
            command=f"coca_eval.analyses.cli:{name}",
            group="analyze",
            report=ReportHooks(
                table_title=title,
                protocol=lazy("coca_eval.analyses.report:protocol_line"),
                plots=lazy(f"coca_eval.analyses.plots_{name}:plot_hook"),
                section="Analyses",
            ),
        )
    )


for _name, _entry in ANALYSES.items():
    _register(_name, *_entry)
