"""The ``mrcr`` task on the generation base's cell runner: a cell is one needle count at one length N,
its value the mean per-sample score x 100 (OpenAI's grading, :mod:`coca_eval.mrcr.scoring`).

``--source generate`` builds each conversation at exactly N tokens (:mod:`coca_eval.mrcr.generate`).
``--source openai`` reads the published conversations as they are: each is rendered through the chat
template (or the plain transcript), and lands in the shortest asked N that holds it with the answer
budget; a row longer than the longest N is skipped and counted in every cell of its needle count,
never cut. Its sample records OpenAI's own bin for it when ``o200k_base`` can be had.
"""

from __future__ import annotations

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model
from coca_eval.methods import MethodSpec
from coca_eval.mrcr.conversation import ConversationFrame
from coca_eval.mrcr.tasks import OPENAI, task_of

VERSION = 1


class PublishedConversations:
    """OpenAI's rows as prompts for one tokenizer and frame, binned by the run's lengths."""

    kind = "MRCR task"

    def __init__(self, frame: ConversationFrame, params) -> None:
        self.frame, self.params = frame, params
        self._rendered: dict[str, object] = {}  # row -> its rendering
        self.bins_unavailable: str | None = None

    def haystack_name(self, task) -> str:
        return "openai"

    def _rows(self, task) -> list:
        from coca_eval.mrcr.data import conversation_rows

        return [
            r for r in conversation_rows(self.params.rows, self.params.needles) if r.needles == task.needles
        ]

    def _render(self, row):
        if row.where not in self._rendered:
            self._rendered[row.where] = self.frame.render_messages(row.messages)
        return self._rendered[row.where]

    def _bin(self, tokens: int, budget: int) -> int | None:
        return next((n for n in self.params.lengths if tokens + budget <= n), None)

    def skipped(self, task) -> int:
        """How many of the task's rows no asked length holds."""
        return sum(self._bin(len(self._render(r).ids), task.answer_budget) is None for r in self._rows(task))

    def build(self, task_name: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        task = task_of(task_name, OPENAI)
        rows = [
            r for r in self._rows(task) if self._bin(len(self._render(r).ids), task.answer_budget) == length
        ]
        if not rows:
            lower = max([n for n in self.params.lengths if n < length], default=0)
            raise CocaEvalError(
                f"no {task.name} row of --data {self.params.rows} is {lower}-{length} tokens with the "
                f"{task.answer_budget}-token answer budget"
            )
        return [self._sample(task, index, row) for index, row in enumerate(rows[:samples])]

    def _sample(self, task, index: int, row) -> PromptSample:
        from coca_eval.mrcr.data import openai_bin, openai_tokens
        from coca_eval.mrcr.scoring import chance_floor

        rendered = self._render(row)
        tokens, why = openai_tokens(row.messages)
        self.bins_unavailable = why
        detail = {
            "row": row.where,
            "prefix": row.prefix,
            "desired_msg_index": row.desired,
            "n_chars": row.n_chars,
            "prompt_tokens": len(rendered.ids),
            "openai_tokens": tokens,
            "openai_bin": openai_bin(tokens),
            "depths": [rendered.spans[row.desired][0] / len(rendered.ids)],
            "chance": chance_floor(row.answer, row.prefix, row.needle_answers()),
        }
        shared = rendered.spans[0][0]
        return PromptSample(
            task.name, index, rendered.ids, (row.answer,), shared, detail, messages=row.messages
        )


class MrcrRunner(GenerationRunner):
    name, metric, version = "mrcr", "score", VERSION

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from coca_eval.chat import template_text
        from coca_eval.generation.haystacks import load_essay
        from coca_eval.mrcr.generate import GeneratedConversations

        template = template_text(self.params.chat_template, backend.tokenizer)

        def make(encode, bos, chat, haystack):
            frame = ConversationFrame(template, backend.tokenizer, encode, bos)
            if self.params.source == OPENAI:
                return PublishedConversations(frame, self.params)
            decode = lambda ids: backend.tokenizer.decode(  # noqa: E731
                ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            return GeneratedConversations(frame, encode, decode, load_essay(haystack).sentences, self.task_of)

        state = prepare_model(self.params, backend, method.model, make)
        return PreparedModel(state.builder, state.builder.frame.digest)

    def task_of(self, dataset: str):
        return task_of(dataset, self.params.source)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.mrcr.scoring import score_answer

        return score_answer(task, output, answers, record)

    def stop_rule(self, task):
        from coca_eval.mrcr.scoring import stop_rule

        return stop_rule(task.answer_budget)

    def cell_context(self, state: PreparedModel, task) -> dict:
        builder = state.builder
        context = {"source": self.params.source, "conversation": builder.frame.name}
        if self.params.source == OPENAI:
            context["skipped_too_long"] = builder.skipped(task)
            if builder.bins_unavailable:
                context["openai_bins"] = builder.bins_unavailable
        return context
