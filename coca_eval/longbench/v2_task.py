"""The ``longbench_v2`` task: LongBench v2's multiple-choice questions on the generation base, one cell
per domain and length, its value the share of questions answered with the right letter x 100
(LongBench v2's rule, :func:`coca_eval.longbench.scoring_v2.extract_choice`). The report adds
LongBench v2's own table over every domain: accuracy overall, by difficulty and by length class.

Both of v1's protocols (:mod:`coca_eval.longbench.task`), with v2's own differences:

* ``--protocol longbench`` builds each prompt as v2's ``pred.py`` does: the template filled, encoded
  whole; past the length (``pred.py``'s ``max_len``) its first ``max_len // 2`` tokens and its last
  ``-max_len // 2`` (Python's floor: the larger half for an odd length) are decoded and joined; then
  the text goes as one user turn of a chat, which the server frames with the chat template and
  tokenises without adding special tokens (as vLLM's chat endpoint does). A model without a chat
  template takes the text as a completion prompt (recorded: the cell's ``chat`` is then false).
* ``--protocol exact``: every prompt exactly N minus the 128-token answer budget, the middle cut.

``--cot`` answers in two calls (:mod:`coca_eval.longbench.v2_reasoning`): N then counts the first
prompt and its 1,024-token reasoning; the second prompt, which holds no document, is built in the same
way (cut and framed under ``longbench``, framed under ``exact``) and answered with 128 tokens.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from coca_eval.errors import CocaEvalError
from coca_eval.longbench.task import ExactPrompts, LongBenchRunner, PublishedPrompts
from coca_eval.longbench.v2_tasks import ANSWER_BUDGET, CONTEXTS, REASONING_BUDGET, domain_task


class _Questions:
    """What both protocols of v2 share: the domain's questions, the prompt with or without the
    document, and each sample's record of its question."""

    kind = "LongBench v2 domain"
    definitions = staticmethod(domain_task)

    def rows(self, task) -> tuple:
        from coca_eval.longbench.v2_data import domain_questions

        return domain_questions(self.params.rows, task.name)

    def text(self, task, row) -> str:
        return task.prompt(row, "0shot_cot" if self.params.cot else CONTEXTS[self.params.context])

    def row_of(self, task, sample):
        return next(r for r in self.rows(task) if r.where == sample.detail["row"])

    @staticmethod
    def row_fields(row) -> dict:
        """v2's: the question's sub-domain, difficulty and length class (its own table's groups)."""
        return {"sub_domain": row.sub_domain, "difficulty": row.difficulty, "length_class": row.length_class}


class PublishedQuestions(_Questions, PublishedPrompts):
    @staticmethod
    def halves(ids: list[int], max_length: int) -> tuple[list[int], list[int]]:
        return ids[: max_length // 2], ids[-max_length // 2 :]

    def encoded(self, text: str, framed: bool) -> list[int]:
        """A framed prompt is tokenised as a chat server does, its special tokens the template's own."""
        return self.tokenizer(text, add_special_tokens=not framed, truncation=False).input_ids

    def answer_prompt(self, task, sample, length: int, reasoning: str) -> list[int]:
        """The chain of thought's second prompt, cut and framed as the first."""
        text = task.prompt(self.row_of(task, sample), "0shot_cot_ans", reasoning)
        framed, message, _ = self.shaped(task, text, length)
        return self.encoded(framed, message is not None)


class ExactQuestions(_Questions, ExactPrompts):
    def answer_prompt(self, task, sample, length: int, reasoning: str) -> list[int]:
        """The chain of thought's second prompt in the first's frame, whole: it holds no document."""
        builder = self._builder(task)
        text = self.framed.encode(task.prompt(self.row_of(task, sample), "0shot_cot_ans", reasoning))
        return [*builder.head, *text, *self._tail(builder)]


class LongBenchV2Runner(LongBenchRunner):
    name = "longbench_v2"
    published_prompts, exact_prompts = PublishedQuestions, ExactQuestions

    def __init__(self, params, journal, progress, **options):
        super().__init__(params, journal, progress, **options)
        if params.cot and self.thinking.mode == "on":
            raise CocaEvalError("--cot and a thought decoded apart are two reasonings: give --thinking off")

    def prepare(self, method, backend):
        if self.params.cot and callable(getattr(backend, "generate_chat", None)):
            raise CocaEvalError(
                "--cot decodes its two calls here: use the hf or vllm backend, not a chat API"
            )
        return super().prepare(method, backend)

    def task_of(self, dataset: str):
        """The domain's task; under ``--cot`` its budget is the reasoning's (what N counts)."""
        task = domain_task(dataset)
        return replace(task, answer_budget=REASONING_BUDGET) if self.params.cot else task

    def evaluate(self, method, backend, state, length: int, key: str, dataset: str):
        self._at = (state, length)  # what the chain of thought's second prompts are built with
        return super().evaluate(method, backend, state, length, key, dataset)

    def new_tokens(self, task, plan=None) -> int:
        return super().new_tokens(task, plan) + (REASONING_BUDGET if self.params.cot else 0)

    def greedy_call(self, backend, plan, rows: list):
        if not self.params.cot:
            return super().greedy_call(backend, plan, rows)
        if plan is not None:
            raise CocaEvalError("--cot and a thought decoded apart are two reasonings: give --thinking off")
        from coca_eval.longbench.v2_reasoning import generate_with_reasoning

        state, length = self._at

        def second(k: int, reasoning: str) -> list[int]:
            cell, index = rows[k]
            return state.builder.answer_prompt(cell.task, cell.samples[index], length, reasoning)

        return partial(generate_with_reasoning, backend, second)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.longbench.scoring_v2 import score_choice

        return score_choice(task, output, answers, record)

    def stop_rule(self, task):
        from coca_eval.backends.stopping import StopRule

        return StopRule(ANSWER_BUDGET)  # the answer's, after the reasoning under --cot
