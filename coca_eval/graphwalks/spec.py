"""The ``graphwalks`` task's registration, read as the generation base reads a family
(:class:`~coca_eval.generation.family.FamilyReading`); its samples score an F1, so the gate pairs
their mean. Imported by ``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.family import FamilyReading, family_spec
from coca_eval.taskspec import register_task

READING = FamilyReading(
    name="graphwalks",
    title="GraphWalks",
    task_of="coca_eval.graphwalks.prompts:task_of",
    score="coca_eval.graphwalks.scoring:score_answer",
)

register_task(
    family_spec(
        READING,
        version=1,
        description="GraphWalks: BFS and parents over a directed graph's edge list, at exact token lengths "
        "or on OpenAI's published rows: F1 of the answer's node set per task and length.",
        graded=True,
        protocol_keys=("source", "chat_template", "answer_budget"),
        **TaskPackage("graphwalks").spec("make_params make_runner command check preset_params shortest"),
    )
)
