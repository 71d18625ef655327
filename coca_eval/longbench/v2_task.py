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
"""

from __future__ import annotations

from coca_eval.longbench.task import ExactPrompts, LongBenchRunner, PublishedPrompts
from coca_eval.longbench.v2_tasks import domain_task


class _Questions:
    """What both protocols of v2 share: the domain's questions, the prompt with or without the
    document, and each sample's record of its question."""

    kind = "LongBench v2 domain"
    definitions = staticmethod(domain_task)

    def rows(self, task) -> tuple:
        from coca_eval.longbench.v2_data import domain_questions

        return domain_questions(self.params.rows, task.name)

    def text(self, task, row) -> str:
        return task.prompt(row, self.params.context)

    @staticmethod
    def detail(row, ids: list[int], cut: int) -> dict:
        return {
            "row": row.where,
            "_id": row.id,
            "sub_domain": row.sub_domain,
            "difficulty": row.difficulty,
            "length_class": row.length_class,
            "prompt_tokens": len(ids),
            "cut_tokens": cut,
        }


class PublishedQuestions(_Questions, PublishedPrompts):
    @staticmethod
    def halves(ids: list[int], max_length: int) -> tuple[list[int], list[int]]:
        return ids[: max_length // 2], ids[-max_length // 2 :]

    def encoded(self, text: str, framed: bool) -> list[int]:
        """A framed prompt is tokenised as a chat server does, its special tokens the template's own."""
        return self.tokenizer(text, add_special_tokens=not framed, truncation=False).input_ids


class ExactQuestions(_Questions, ExactPrompts):
    pass


class LongBenchV2Runner(LongBenchRunner):
    name = "longbench_v2"
    published_prompts, exact_prompts = PublishedQuestions, ExactQuestions

    def task_of(self, dataset: str):
        return domain_task(dataset)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.longbench.scoring_v2 import score_choice

        return score_choice(task, output, answers, record)

    def stop_rule(self, task):
        from coca_eval.backends.stopping import StopRule

        return StopRule(task.answer_budget)
