"""HELMET's judge prompts and its reading of the judge's verdicts, for the judged tasks.

HELMET scores NarrativeQA and both summarisation sets with GPT-4o (``scripts/eval_gpt4_longqa.py`` and
``scripts/eval_gpt4_summ.py`` at 4526dfb); the templates in ``judge_templates/`` are its prompt texts,
filled here as its scripts fill them:

* NarrativeQA: one prompt with the question, the list of references as Python writes a list, and the
  answer parsed after ``Answer:`` once its newlines are spaces. The verdict's last ``{...}`` is read as
  JSON; the sample scores ``fluency x correctness`` (0 to 3), None when either is missing.
* Summaries: three prompts (fluency; recall of the reference's key points, numbered; precision against
  the expert summary: InfiniteBench's reference, Multi-LexSum's long summary), each with the stripped
  output; InfiniteBench's books use the ``_book`` templates. A verdict is its last ``{...}`` read as JSON
  (else the last fenced ``json`` block); the sample scores ``fluency x F1`` of recall (points found over
  points) and precision (sentences supported over sentences), None when a verdict does not parse (or,
  where HELMET's script would stop on it, lacks its field).

:func:`judge_score` returns a value in [0, 1], the scale of every HELMET cell here: NarrativeQA's 0-3
divided by 3 (HELMET's tables multiply its mean by 100/3), a summary's F1 as it is (HELMET's by 100).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.helmet.scoring import parse_after

JUDGED = ("narrativeqa", "infbench_sum", "multi_lexsum")
TEMPLATES = Path(__file__).with_name("judge_templates")


@dataclass(frozen=True)
class JudgeSample:
    """What a judge prompt holds of one sample: the question and references (NarrativeQA), the model's
    output, and for a summary the reference's key points and the expert summary."""

    output: str
    question: str = ""
    answers: Sequence[str] = ()
    keypoints: Sequence[str] = field(default_factory=tuple)
    expert_summary: str = ""


@cache
def template(name: str) -> str:
    return (TEMPLATES / f"{name}.txt").read_text(encoding="utf-8")


def judge_sample(task: str, record: dict, data: str | None = None) -> JudgeSample:
    """A judged task's sample record (its output, references and ``judge`` entry) as the judge reads it;
    InfiniteBench's key points come from HELMET's file under ``--data`` (read for the judge alone)."""
    from coca_eval.helmet.long_data import INFBENCH_KEYPOINTS, infbench_keypoints

    judge = record.get("judge", {})
    keypoints = judge.get("keypoints", ())
    if task == "infbench_sum":
        points = infbench_keypoints(data)
        if judge.get("id") not in points:
            raise CocaEvalError(
                f"infbench_sum: HELMET's {INFBENCH_KEYPOINTS} has no key points of row {judge.get('id')}"
            )
        keypoints = points[judge["id"]]
    return JudgeSample(
        record["output"],
        judge.get("question", ""),
        tuple(record["answers"]),
        tuple(keypoints),
        judge.get("expert_summary", ""),
    )


def judge_prompts(task: str, sample: JudgeSample) -> tuple[str, ...]:
    """The judge's prompts for one sample of ``task``: one for NarrativeQA; fluency, recall and precision
    for a summary."""
    if task == "narrativeqa":
        parsed = parse_after(sample.output.replace("\n", " "))
        return (
            template("longqa").format(
                question=sample.question, correct_answers=str(list(sample.answers)), parsed_output=parsed
            ),
        )
    if task not in JUDGED:
        raise ValueError(f"HELMET judges no {task!r}")
    book = "_book" if task == "infbench_sum" else ""
    summary = sample.output.strip()
    points = "\n".join(f"{i + 1}. {point}" for i, point in enumerate(sample.keypoints))
    return (
        template("fluency" + book).format(text=summary),
        template("recall" + book).format(keypoints=points, summary=summary),
        template("precision" + book).format(expert_summary=sample.expert_summary, summary=summary),
    )


def judge_prompt(task: str, sample: JudgeSample) -> str:
    """The one prompt of a single-call task (NarrativeQA); a summary takes three (:func:`judge_prompts`)."""
    prompts = judge_prompts(task, sample)
    if len(prompts) != 1:
        raise ValueError(f"{task} is judged by {len(prompts)} prompts: use judge_prompts")
    return prompts[0]


def _last_json(text: str, fenced: bool) -> dict | None:
    """The verdict's last ``{...}`` as JSON (the summary scripts then try the last fenced json block)."""
    found = re.findall(r"\{.*?\}", text, re.DOTALL)
    if not found:
        return None
    for candidate in (found[-1], *_fenced(text, fenced)):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    return None


def _fenced(text: str, fenced: bool) -> list[str]:
    blocks = re.findall(r"(?:```json)(.+)(?:```)", text, re.DOTALL) if fenced else []
    return blocks[-1:]


def longqa_score(verdict: str) -> float | None:
    scores = _last_json(verdict, fenced=False)
    if not isinstance(scores, dict) or "fluency" not in scores or "correctness" not in scores:
        return None
    return scores["fluency"] * scores["correctness"] / 3


def summary_score(verdicts: Sequence[str], keypoints: int) -> float | None:
    """``fluency x F1(recall, precision)`` from the three verdicts, None when one does not parse."""
    parsed = [_last_json(v, fenced=True) for v in verdicts]
    if any(p is None for p in parsed):
        return None
    fluency, recall, precision = parsed
    try:
        rec = recall["recall"] / keypoints if keypoints > 0 else 0
        prec = precision["precision"] / precision["sentence_count"] if precision["sentence_count"] > 0 else 0
        return fluency["fluency"] * 2 * (rec * prec) / (rec + prec) if rec + prec > 0 else 0.0
    except (KeyError, TypeError):  # a verdict without its field: HELMET's script stops there
        return None


def judge_score(task: str, verdicts: str | Sequence[str], sample: JudgeSample | None = None) -> float | None:
    """The sample's judged score in [0, 1] from the judge's verdicts (one string for NarrativeQA; the
    three, in :func:`judge_prompts`' order, with the sample for its key points, for a summary)."""
    if task == "narrativeqa":
        return longqa_score(verdicts if isinstance(verdicts, str) else verdicts[0])
    if task not in JUDGED or sample is None or isinstance(verdicts, str) or len(verdicts) != 3:
        raise ValueError(f"{task}: a summary's score needs its three verdicts and its sample")
    return summary_score(verdicts, len(sample.keypoints))
