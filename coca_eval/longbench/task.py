"""The ``longbench`` task on the generation base's cell runner: a cell is one LongBench task at one
length, its value the mean per-sample score x 100 (LongBench's metric, :mod:`coca_eval.longbench.grading`).

``--protocol longbench`` builds each prompt as ``pred.py`` does (:class:`PublishedPrompts`): the task's
template filled from the row and tokenised whole; past the length (``pred.py``'s ``max_length``) the
first and last half of the length are decoded and joined, and the text framed by the chat template
for the tasks ``pred.py`` frames, then tokenised again. Every row is in every length.

``--protocol exact`` (:class:`ExactPrompts`): every prompt is exactly N minus the answer budget. A row
whose prompt is longer loses the middle of its tokens (the first and last halves of what fits kept, as
LongBench cuts); a row whose prompt is shorter is left out of that length, never padded, and counted
(``too_short``), so each length holds the rows that reach it.
"""

from __future__ import annotations

from functools import partial

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model, rendered_template
from coca_eval.longbench.params import PUBLISHED
from coca_eval.longbench.tasks import task_of
from coca_eval.methods import MethodSpec

VERSION = 1


class _Rows:
    """What both protocols share: the task's rows as read, each sample's record of its row."""

    kind = "LongBench task"
    definitions = staticmethod(task_of)

    def __init__(self, params) -> None:
        self.params = params

    def haystack_name(self, task) -> str:
        return "longbench"

    def rows(self, task) -> tuple:
        from coca_eval.longbench.data import task_rows

        return task_rows(self.params.rows, task.name, self.params.subset)

    def text(self, task, row) -> str:
        """The task's prompt for a row, before any cut or frame."""
        return task.prompt(row)

    @classmethod
    def detail(cls, row, ids: list[int], cut: int) -> dict:
        """A sample's record of its row: where it is and its id, what the version keeps of it
        (:meth:`row_fields`), the prompt's tokens and how many the middle cut dropped."""
        return {
            "row": row.where,
            "_id": row.id,
            **cls.row_fields(row),
            "prompt_tokens": len(ids),
            "cut_tokens": cut,
        }

    @staticmethod
    def row_fields(row) -> dict:
        """v1's: the row's own length and, for the classification tasks, its classes."""
        return {
            "longbench_length": row.length,
            "all_classes": list(row.all_classes) if row.all_classes is not None else None,
        }


class PublishedPrompts(_Rows):
    """``pred.py``'s prompts for one tokenizer (``template``: the chat template's text, or None)."""

    def __init__(self, params, tokenizer, template: str | None) -> None:
        super().__init__(params)
        self.tokenizer, self.template = tokenizer, template

    def prompt(self, task, row, max_length: int) -> tuple[str, str | None, int]:
        """The prompt's text as ``pred.py`` gives it to the model, the user's message when a chat frame
        holds it (None without one), and how many tokens the middle cut dropped."""
        return self.shaped(task, self.text(task, row), max_length)

    def shaped(self, task, text: str, max_length: int) -> tuple[str, str | None, int]:
        """:meth:`prompt` of a prompt's ``text``: cut to ``max_length`` and framed."""
        ids = self.tokenizer(text, truncation=False).input_ids
        cut = 0
        if len(ids) > max_length:
            first, last = self.halves(ids, max_length)
            decode = partial(self.tokenizer.decode, skip_special_tokens=True)
            text, cut = decode(first) + decode(last), len(ids) - len(first) - len(last)
        if task.chat and self.template is not None:
            return self._framed(text), text, cut
        return text, None, cut

    @staticmethod
    def halves(ids: list[int], max_length: int) -> tuple[list[int], list[int]]:
        """The tokens a middle cut keeps: ``pred.py``'s ``int(max_length / 2)`` from each end."""
        half = int(max_length / 2)
        return ids[:half], ids[-half:]

    def encoded(self, text: str, framed: bool) -> list[int]:
        """The prompt's ids as the model is given them: ``pred.py`` tokenises the framed text whole."""
        return self.tokenizer(text, truncation=False).input_ids

    def _framed(self, text: str) -> str:
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], chat_template=self.template, add_generation_prompt=True,
            tokenize=False,
        )  # fmt: skip

    def build(self, task_name: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        task = self.definitions(task_name)
        out = []
        for index, row in enumerate(self.rows(task)[:samples]):
            text, message, cut = self.prompt(task, row, length)
            ids = self.encoded(text, message is not None)
            turns = ({"role": "user", "content": message},) if message is not None else ()
            detail = self.detail(row, ids, cut)
            out.append(PromptSample(task.name, index, ids, row.answers, 0, detail, (0, len(ids)), "", turns))
        return out


class ExactPrompts(_Rows):
    """Prompts of exactly N minus the answer budget for one tokenizer, from the base's frame (BOS, chat
    head and tail: ``frames(task)`` gives the chat frame's builder, or the plain one for the tasks
    ``pred.py`` runs without one)."""

    def __init__(self, params, framed, plain) -> None:
        super().__init__(params)
        self.framed, self.plain = framed, plain
        self._encoded: dict[str, list[int]] = {}

    def _builder(self, task):
        return self.framed if task.chat else self.plain

    def _ids(self, task, row) -> list[int]:
        if row.where not in self._encoded:
            self._encoded[row.where] = self.framed.encode(self.text(task, row))
        return self._encoded[row.where]

    def too_short(self, task, prompt_length: int) -> int:
        """How many of the task's rows are shorter than ``prompt_length``, framed."""
        builder = self._builder(task)
        frame = len(builder.head) + len(self._tail(builder))
        return sum(frame + len(self._ids(task, r)) < prompt_length for r in self.rows(task))

    @staticmethod
    def _tail(builder) -> list[int]:
        return list(builder.chat.tail) if builder.chat is not None else []

    def build(self, task_name: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        task = self.definitions(task_name)
        builder = self._builder(task)
        head, tail = list(builder.head), self._tail(builder)
        keep = prompt_length - len(head) - len(tail)
        if keep < 2:
            raise CocaEvalError(f"length {length} leaves no room for {task.name}'s prompt beside its frame")
        reaching = [r for r in self.rows(task) if len(self._ids(task, r)) >= keep]
        if not reaching:
            raise CocaEvalError(
                f"no {task.name} row of --data {self.params.data} reaches {prompt_length} prompt tokens "
                f"(N {length} minus its {task.answer_budget}-token answer budget); rows are never padded"
            )
        out = []
        for index, row in enumerate(reaching[:samples]):
            text = self._ids(task, row)
            first = keep // 2
            ids = [*head, *text[:first], *text[len(text) - (keep - first) :], *tail]
            detail = self.detail(row, ids, len(text) - keep)
            span = (len(head), len(ids) - len(tail))
            out.append(PromptSample(task.name, index, ids, row.answers, 0, detail, span))
        return out


class LongBenchRunner(GenerationRunner):
    name, metric, version = "longbench", "score", VERSION
    published_prompts, exact_prompts = PublishedPrompts, ExactPrompts

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from dataclasses import replace

        from coca_eval.generation.assembly import ExactPromptBuilder

        exact = partial(ExactPromptBuilder, definitions=self.task_of)
        state = prepare_model(self.params, backend, method.model, exact, thinking=self.thinking)
        if self.params.protocol == PUBLISHED:
            refusal = "--protocol longbench renders the chat template itself: a chat API cannot take it"
            template = rendered_template(self.params, backend, state, True, refusal, thinking=self.thinking)
            return PreparedModel(
                self.published_prompts(self.params, backend.tokenizer, template), state.chat_digest
            )
        plain = prepare_model(
            replace(self.params, chat_template="none"), backend, method.model, exact, thinking=self.thinking
        )
        prompts = self.exact_prompts(self.params, state.builder, plain.builder)
        return PreparedModel(prompts, state.chat_digest)

    def task_of(self, dataset: str):
        return task_of(dataset)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.longbench.grading import score_answer

        return score_answer(task, output, answers, record)

    def stop_rule(self, task):
        from coca_eval.longbench.grading import stop_rule

        return stop_rule(task)

    def cell_context(self, state: PreparedModel, task) -> dict:
        context = {"protocol": self.params.protocol, **self.params.cell_keys(), "chat": task.chat}
        if self.params.protocol != PUBLISHED:
            context["rows"] = len(state.builder.rows(task))
        return context
