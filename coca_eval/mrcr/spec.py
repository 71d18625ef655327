"""The ``mrcr`` task's registration, read as the generation base reads a family
(:class:`~coca_eval.generation.family.FamilyReading`), with MRCR's own report: the curve over length
per needle count, each point's 95 % interval, its area and the chance floor. Imported by
``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from dataclasses import replace

from coca_eval.generation.family import family_spec
from coca_eval.mrcr.reading import READING
from coca_eval.registry import lazy
from coca_eval.taskspec import register_task

_spec = family_spec(
    READING,
    version=1,
    description="MRCR: reproduce the i-th of 2, 4 or 8 identical requests' answers from a long "
    "conversation, at exact token lengths or on OpenAI's published conversations: the card's "
    "SequenceMatcher score per needle count and length.",
    make_params="coca_eval.mrcr.params:make_mrcr_params",
    make_runner="coca_eval.mrcr.task:MrcrRunner",
    command="coca_eval.cli.mrcr:mrcr",
    check=lazy("coca_eval.mrcr.params:check_methods"),
)
register_task(
    replace(
        _spec,
        preset_params="coca_eval.mrcr.params:MrcrPresetParams",
        shortest=lazy("coca_eval.mrcr.params:shortest_length"),
        report=replace(_spec.report, plots=lazy("coca_eval.mrcr.plots:plot_hook")),
        gate=replace(
            _spec.gate,
            test=lazy("coca_eval.generation.gate:paired_mean_test"),
            protocol_keys=("source", "conversation", "chat_template", "answer_budget"),
        ),
    )
)
