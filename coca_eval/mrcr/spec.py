"""The ``mrcr`` task's registration, read as the generation base reads a family
(:class:`~coca_eval.generation.family.FamilyReading`), with MRCR's own report: the curve over length
per needle count, each point's 95 % interval, its area and the chance floor. Its samples score a
ratio, so the gate pairs their mean. Imported by ``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.family import family_spec
from coca_eval.mrcr.reading import READING
from coca_eval.taskspec import register_task

MRCR = TaskPackage("mrcr")

register_task(
    family_spec(
        READING,
        version=1,
        description="MRCR: reproduce the i-th of 2, 4 or 8 identical requests' answers from a long "
        "conversation, at exact token lengths or on OpenAI's and DeepMind's published conversations: "
        "the published SequenceMatcher score per needle count and length.",
        graded=True,
        protocol_keys=("source", "conversation", "chat_template", "answer_budget"),
        **MRCR.spec("make_params make_runner command check preset_params shortest"),
        **MRCR.report("plots"),
    )
)
