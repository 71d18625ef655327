"""The ``graphwalks`` task on the generation base's cell runner: a cell is one task (``bfs`` or
``parents``) at one length N, its value the mean per-sample F1 x 100.

``--source generate`` builds each prompt with the base's exact-length builder (prompt + answer budget
= N). ``--source openai`` reads the published rows as they are: each is tokenised (through the chat
template when one is in force, as the user's message) and lands in the shortest asked N that holds it
with the answer budget; a row longer than the longest N is skipped and counted in every cell of its
task, never cut.
"""

from __future__ import annotations

from functools import partial

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model
from coca_eval.graphwalks.params import OPENAI
from coca_eval.graphwalks.prompts import ANSWER_BUDGET, task_of
from coca_eval.methods import MethodSpec

VERSION = 1


class PublishedRows:
    """OpenAI's rows as prompts for one tokenizer, binned by the run's lengths."""

    def __init__(self, exact, params) -> None:
        self.exact, self.params = exact, params
        self._counts: dict[int, int] = {}  # row position -> its prompt's tokens

    def haystack_name(self, task) -> str:
        return "openai"

    def _rows(self, task: str) -> list[tuple[int, object]]:
        from coca_eval.graphwalks.data import graph_rows

        return [(i, r) for i, r in enumerate(graph_rows(self.params.rows)) if r.problem_type == task]

    def _ids(self, row) -> tuple[list[int], int]:
        """The row's prompt ids and where its text starts (after BOS and any chat head)."""
        builder = self.exact
        text = builder.encode(row.prompt)
        tail = list(builder.chat.tail) if builder.chat is not None else []
        return builder.head + text + tail, len(builder.head)

    def _length(self, position: int, row) -> int:
        if position not in self._counts:
            self._counts[position] = len(self._ids(row)[0])
        return self._counts[position]

    def _bin(self, tokens: int) -> int | None:
        return next((n for n in self.params.lengths if tokens + ANSWER_BUDGET <= n), None)

    def skipped(self, task: str) -> int:
        """How many of the task's rows no asked length holds."""
        return sum(self._bin(self._length(i, r)) is None for i, r in self._rows(task))

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        chosen = [(i, r) for i, r in self._rows(task) if self._bin(self._length(i, r)) == length]
        if not chosen:
            lower = max([n for n in self.params.lengths if n < length], default=0)
            raise CocaEvalError(
                f"no {task} row of --data {self.params.rows} is {lower}-{length} tokens with the "
                f"{ANSWER_BUDGET}-token answer budget"
            )
        out = []
        for index, (_, row) in enumerate(chosen[:samples]):
            ids, start = self._ids(row)
            detail = {"row": row.where, "prompt_chars": row.prompt_chars, "prompt_tokens": len(ids)}
            span = (start, len(ids) - (len(self.exact.chat.tail) if self.exact.chat else 0))
            out.append(PromptSample(task, index, ids, tuple(row.answer_nodes), 0, detail, span))
        return out


class GraphwalksRunner(GenerationRunner):
    name, metric, version = "graphwalks", "score", VERSION

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from coca_eval.generation.assembly import ExactPromptBuilder

        exact = partial(ExactPromptBuilder, definitions=task_of)
        state = prepare_model(self.params, backend, method.model, exact, self.thinking)
        state.builder.kind = "GraphWalks task"
        if self.params.source != OPENAI:
            return state
        return PreparedModel(PublishedRows(state.builder, self.params), state.chat_digest)

    def task_of(self, dataset: str):
        return task_of(dataset)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.graphwalks.scoring import score_answer

        return score_answer(task, output, answers, record)

    def stop_rule(self, task):
        from coca_eval.graphwalks.scoring import stop_rule

        return stop_rule(task.answer_budget)

    def cell_context(self, state: PreparedModel, task) -> dict:
        if self.params.source != OPENAI:
            return {"source": self.params.source}
        return {"source": OPENAI, "skipped_too_long": state.builder.skipped(task.name)}
