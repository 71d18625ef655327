"""The ``aa_lcr`` task on the generation base's cell runner: one cell per length, its value the share of
answers the judge finds CORRECT x 100 (AA-LCR's accuracy). Prompts are built by
:mod:`coca_eval.aa_lcr.packing`; each answer (the answer alone, a thought split off) is judged with the
card's equality-checker prompt (:mod:`coca_eval.aa_lcr.prompts`) by the run's judge
(:mod:`coca_eval.judging.judges`), whose prompt, reply and verdict the sample records; the answer is
stripped of surrounding white space first, as the benchmark's ports strip it. A judge that
gives no verdict (no answer in time, an error, a reply naming none) makes the cell an error cell naming
the question."""

from __future__ import annotations

from coca_eval.aa_lcr.params import TASK
from coca_eval.aa_lcr.prompts import judge_messages, verdict
from coca_eval.errors import CocaEvalError
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model
from coca_eval.judging.judges import Judge, JudgeFailed, judge_identity, parse_judge

VERSION = 1


class AaLcrTask:
    """AA-LCR as one task of the base: its name, answer budget and (for the builder) haystack."""

    chat = True
    haystack = "aa_lcr"

    def __init__(self, answer_budget: int) -> None:
        self.name, self.answer_budget = TASK, answer_budget


def judged(protocol: str, question: str, official: str, output: str, reply: str) -> dict:
    """A sample's record of its judgement: the judge's messages, its reply, the verdict and the score
    (1 for CORRECT, 0 for INCORRECT); a reply naming no verdict raises."""
    messages = judge_messages(protocol, question, official, output.strip())
    found = verdict(protocol, reply)
    return {
        "judge_protocol": protocol,
        "judge_prompt": messages,
        "judge_reply": reply,
        "verdict": found,
        "score": 1.0 if found == "CORRECT" else 0.0,
    }


def recorded_score(task, output: str, answers, record: dict | None = None) -> dict:
    """A journaled sample's score from its recorded reply, no judge asked: what the contradiction check
    and a merge compare a sample's record with (a changed output no longer matches its judge prompt)."""
    record = record or {}
    protocol = record.get("judge_protocol", "1.1")
    return judged(protocol, record.get("question", ""), answers[0], output, record.get("judge_reply", ""))


def task_of(dataset: str) -> AaLcrTask:
    if dataset != TASK:
        raise CocaEvalError(f"unknown aa_lcr task {dataset!r} (valid: {TASK})")
    return AaLcrTask(0)


class AaLcrRunner(GenerationRunner):
    name, metric, version = TASK, "accuracy", VERSION

    def __init__(self, params, journal, progress, **options):
        super().__init__(params, journal, progress, **options)
        spec, identity = judge_identity(parse_judge(params.judge))
        if identity != params.judge_id:
            raise CocaEvalError(f"the judge changed since the run began ({params.judge_id}, now {identity})")
        self.judge = Judge(spec, identity, journal, params.judge_max_tokens)

    def prepare(self, method, backend) -> PreparedModel:
        from functools import partial

        from coca_eval.aa_lcr.data import questions
        from coca_eval.aa_lcr.packing import Packer
        from coca_eval.generation.assembly import ExactPromptBuilder

        self.judge.device = str(getattr(backend, "device", "cpu"))
        exact = partial(ExactPromptBuilder, definitions=self.task_of)
        state = prepare_model(self.params, backend, method.model, exact, thinking=self.thinking)
        return PreparedModel(
            Packer(self.params, state.builder, questions(self.params.data)), state.chat_digest
        )

    def task_of(self, dataset: str) -> AaLcrTask:
        task = task_of(dataset)
        task.answer_budget = self.params.answer_tokens
        return task

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        record = record or {}
        where = f"question {record.get('question_id', '?')}"
        protocol = self.params.judge_protocol
        messages = judge_messages(protocol, record["question"], answers[0], output.strip())
        reply = self.judge.ask(messages, where)
        try:
            return judged(protocol, record["question"], answers[0], output, reply)
        except CocaEvalError as exc:
            raise JudgeFailed(f"{where}: {exc}") from None

    def greedy_call(self, backend, plan, rows: list):
        """The base's call with its answers journaled before they are judged (a thought decoded apart
        goes unkept: a judge failure there decodes its batch again)."""
        from coca_eval.judging.answers import judged_call

        generate = super().greedy_call(backend, plan, rows)
        return generate if plan is not None else judged_call(generate, self.journal, rows)

    def evaluate(self, method, backend, state, length: int, key: str, dataset: str):
        asked, reused = self.judge.asked, self.judge.reused
        cell = super().evaluate(method, backend, state, length, key, dataset)
        calls = {"asked": self.judge.asked - asked, "reused": self.judge.reused - reused}
        return cell.model_copy(update={"detail": {**cell.detail, "judge_calls": calls}})

    def cell_context(self, state: PreparedModel, task) -> dict:
        return {
            "protocol": self.params.protocol,
            "judge": self.params.judge_id,
            "judge_protocol": self.params.judge_protocol,
            "left_out": getattr(state.builder, "left_out", 0),
        }
