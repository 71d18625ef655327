"""BABILong's answer check (``compare_answers`` in its ``babilong/metrics.py``), written here from its rules.

An output is right when, after it is lower-cased and cut at its first ``.`` (then at ``<context>`` and
``<example>``, where a model starts writing examples of its own), the task's labels it names, less the
labels the question itself names, are exactly the target: one label, or for qa8's multi-object answers
(``apple,milk``) every one of them and no other. BABILong's cut at ``Question`` comes after the
lower-casing and so never fires; it is kept out here for the same effect.
"""

from __future__ import annotations

from collections.abc import Iterable


def first_sentence(output: str) -> str:
    text = output.lower().split(".")[0]
    return text.split("<context>")[0].split("<example>")[0]


def is_correct(target: str, output: str, question: str, labels: Iterable[str]) -> bool:
    """Whether ``output`` answers ``target`` by BABILong's rule (see the module doc)."""
    text, target = first_sentence(output), target.lower()
    labels = {label.lower() for label in labels}
    asked = {label for label in labels if label in question.lower()}
    named = {label for label in labels if label in text} - asked
    if "," in target and len(target) > 3:  # qa8: several objects
        wanted = target.split(",")
        return all(t in named for t in wanted) and len(named) == len(wanted)
    return target in named and len(named) == 1


def score_record(task, output: str, answers, record: dict | None = None) -> dict:
    """A sample's score (1.0 right, 0.0 wrong) by BABILong's check; the question is the sample's own."""
    from coca_eval.babilong.prompts import task_labels

    question = (record or {}).get("question")
    if not isinstance(question, str):
        raise ValueError("a BABILong sample records its question")
    return {"score": float(is_correct(answers[0], output, question, task_labels(task.name)))}
