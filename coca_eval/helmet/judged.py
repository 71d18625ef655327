"""HELMET's judged scores (``--judge``): NarrativeQA's GPT-4o score and the summaries' GPT-4o F1, asked of
the judge this run names instead of GPT-4o.

Each judged sample's prompts are built and its verdicts read exactly as HELMET's scripts do
(:mod:`coca_eval.helmet.judge_prompts`): one prompt for a NarrativeQA answer, three (fluency, recall,
precision) for a summary. The judge's calls go through :class:`~coca_eval.judging.judges.Judge`, so they
are journaled and a rerun asks nothing twice. The sample's ``score`` becomes the judged one (in [0, 1], as
HELMET scales it), the metric without a judge is kept beside it (``unjudged_score``), and a verdict that
does not read is a failure naming the sample, never a 0.
"""

from __future__ import annotations

from coca_eval.errors import CocaEvalError
from coca_eval.judging.judges import JudgeFailed


def judged_record(judge, task, output: str, answers, record: dict | None, data: str | None) -> dict:
    """What a judged sample adds to its metrics: its judged ``score``, the prompts' verdicts, and the
    metric without a judge under ``unjudged_score``."""
    from coca_eval.helmet.judge_prompts import judge_prompts, judge_sample, judge_score

    record = record or {}
    named = record.get("index", record.get("judge", {}).get("id", record.get("judge", {}).get("question")))
    where = f"{task.name} sample {named if named is not None else '?'}"
    try:
        sample = judge_sample(task.name, {**record, "output": output, "answers": list(answers)}, data)
    except CocaEvalError as exc:
        raise JudgeFailed(f"{where}: {exc}") from None
    prompts = judge_prompts(task.name, sample)
    verdicts = [judge.ask([{"role": "user", "content": prompt}], where) for prompt in prompts]
    score = judge_score(task.name, verdicts[0] if len(verdicts) == 1 else verdicts, sample)
    if score is None:
        raise JudgeFailed(f"{where}: the judge's verdict does not read as HELMET's script reads it")
    return {"score": score, "judge_verdicts": verdicts}


def make_judge(params, journal):
    """The run's judge (None without ``--judge``), checked against the identity the run began with."""
    if params.judge is None:
        return None
    from coca_eval.judging.judges import Judge, judge_identity, parse_judge

    spec, identity = judge_identity(parse_judge(params.judge))
    if identity != params.judge_id:
        raise CocaEvalError(f"the judge changed since the run began ({params.judge_id}, now {identity})")
    return Judge(spec, identity, journal, params.judge_max_tokens)
