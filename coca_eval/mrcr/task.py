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
from coca_eval.mrcr.tasks import DEEPMIND, OPENAI, task_of


def _openai_rows(params):
    from coca_eval.mrcr.data import conversation_rows

    return lambda needles: conversation_rows(params.rows, needles)


def _deepmind_rows(params):
    from coca_eval.mrcr.deepmind import v2_rows

    return lambda needles: v2_rows(params.data, needles)


PUBLISHED = {OPENAI: _openai_rows, DEEPMIND: _deepmind_rows}

VERSION = 1


class PublishedConversations:
    """Published rows (OpenAI's, DeepMind's) as prompts for one tokenizer and frame, binned by the
    run's lengths; ``rows(needles)`` reads them."""

    kind = "MRCR task"

    def __init__(self, frame: ConversationFrame, params, rows) -> None:
        self.frame, self.params, self.rows = frame, params, rows
        self._rendered: dict[str, object] = {}  # row -> its rendering
        self.bins_unavailable: str | None = None

    def haystack_name(self, task) -> str:
        return self.params.source

    def _rows(self, task) -> list:
        return [r for r in self.rows(self.params.needles) if r.needles == task.needles]

    def _tokens(self, row) -> int:
        if row.where not in self._rendered:
            self._rendered[row.where] = self.frame.render_messages(row.messages)
        return len(self._rendered[row.where].ids)

    def _bin(self, tokens: int, budget: int) -> int | None:
        return next((n for n in self.params.lengths if tokens + budget <= n), None)

    def skipped(self, task) -> int:
        """How many of the task's rows no asked length holds."""
        return sum(self._bin(self._tokens(r), task.answer_budget) is None for r in self._rows(task))

    def build(self, task_name: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        task = task_of(task_name, self.params.source)
        rows = [r for r in self._rows(task) if self._bin(self._tokens(r), task.answer_budget) == length]
        if not rows:
            lower = max([n for n in self.params.lengths if n < length], default=0)
            raise CocaEvalError(
                f"no {task.name} row of --data {self.params.rows} is {lower}-{length} tokens with the "
                f"{task.answer_budget}-token answer budget"
            )
        return [self._sample(task, index, row) for index, row in enumerate(rows[:samples])]

    def _sample(self, task, index: int, row) -> PromptSample:
        self._tokens(row)
        rendered = self._rendered[row.where]
        detail = {**row.detail(), "prompt_tokens": len(rendered.ids)}
        self.bins_unavailable = detail.pop("openai_bins", None)
        if row.wanted_message is not None:
            detail["depths"] = [rendered.spans[row.wanted_message][0] / len(rendered.ids)]
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

        template = self.thinking.bound(template_text(self.params.chat_template, backend.tokenizer))

        def make(encode, bos, chat, haystack):
            frame = ConversationFrame(template, backend.tokenizer, encode, bos)
            if self.params.source in PUBLISHED:
                return PublishedConversations(frame, self.params, PUBLISHED[self.params.source](self.params))
            decode = lambda ids: backend.tokenizer.decode(  # noqa: E731
                ids, skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            return GeneratedConversations(frame, encode, decode, load_essay(haystack).sentences, self.task_of)

        state = prepare_model(self.params, backend, method.model, make, self.thinking)
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
        if self.params.source in PUBLISHED:
            context["skipped_too_long"] = builder.skipped(task)
            if builder.bins_unavailable:
                context["openai_bins"] = builder.bins_unavailable
        return context
