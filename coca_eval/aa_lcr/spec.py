"""The ``aa_lcr`` task's registration, read as the generation base reads a family: one task (AA-LCR's
accuracy) by length. Samples are right or wrong by the judge's verdict, so the gate pairs them by
McNemar's test; runs judged by different judges never pair (the judge is a strict key of every
generation family's gate). Its command is ``coca-eval aa-lcr`` (:mod:`coca_eval.cli.aa_lcr`).
Imported by ``coca-eval --help``: every hook is lazy."""

from __future__ import annotations

from coca_eval.conventions import TaskPackage
from coca_eval.generation.family import FamilyReading, family_spec
from coca_eval.taskspec import register_task

READING = FamilyReading(
    name="aa_lcr",
    title="AA-LCR",
    task_of="coca_eval.aa_lcr.task:task_of",
    score="coca_eval.aa_lcr.task:recorded_score",
)

register_task(
    family_spec(
        READING,
        version=1,
        description="AA-LCR: Artificial Analysis' 100 long-context reasoning questions over document sets, "
        "by its published prompt or at exact token lengths, scored by a model judge with its "
        "equality-checker prompt: accuracy per length.",
        protocol_keys=("protocol", "chat_template", "answer_budget", "judge_protocol"),
        **TaskPackage("aa_lcr").spec("make_params make_runner check preset_params shortest"),
    )
)
