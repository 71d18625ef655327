"""The ``babilong`` task: methods x bAbI tasks x lengths, journaled per sample, on the
generation base's cell runner (:mod:`coca_eval.generation.runner`).

As HELMET's runner: only the tasks, prompts
(:mod:`coca_eval.babilong.builder`), the scorer (BABILong's answer check, which reads the sample's
question) and what a cell records of how its prompts were made are BABILong's. A cell's value is the
share of samples answered right x 100.
"""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.babilong.spec import BABILONG_METRIC, BABILONG_TASK_VERSION
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model, rendered_template
from coca_eval.methods import MethodSpec


@dataclass(frozen=True)
class BabilongTask:
    name: str
    answer_budget: int


class BabilongRunner(GenerationRunner):
    name, metric, dataset = "babilong", BABILONG_METRIC, None
    version = BABILONG_TASK_VERSION

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from coca_eval.babilong.builder import BabilongPromptBuilder

        state = prepare_model(self.params, backend, method.model, thinking=self.thinking)
        prepared = self.params.source == "babilong"
        template = rendered_template(
            self.params,
            backend,
            state,
            prepared,
            "--source babilong with a chat template tokenises the rendered text itself; a chat API "
            "renders its own: use the completions endpoint, or --source generate",
            thinking=self.thinking,
        )
        builder = BabilongPromptBuilder(state.builder, self.params, backend.tokenizer, template)
        reserve = getattr(backend, "reserve", None)  # an engine sized up front (vLLM) learns the real need
        if prepared and callable(reserve):
            from coca_eval.babilong.prompt_task import ANSWER_BUDGET

            reserve(builder.longest_prepared() + ANSWER_BUDGET)
        return PreparedModel(builder, state.chat_digest)

    def task_of(self, dataset: str) -> BabilongTask:
        from coca_eval.babilong.prompt_task import ANSWER_BUDGET

        return BabilongTask(dataset, ANSWER_BUDGET)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        from coca_eval.babilong.scoring import score_record

        return score_record(task, output, answers, record)

    def evaluate(
        self, method: MethodSpec, backend, state: PreparedModel, length: int, key: str, dataset: str
    ):
        self._cell = (dataset, length)  # the cell whose context is asked for next (its skipped stories)
        return super().evaluate(method, backend, state, length, key, dataset)

    def cell_context(self, state: PreparedModel, task) -> dict:
        haystack = state.builder.haystack_name(task)
        cell = getattr(self, "_cell", None)
        skipped, over = state.builder.skipped.get(cell, 0), state.builder.over_limit.get(cell, 0)
        return {
            "source": self.params.source,
            "prompt_parts": list(self.params.prompt_parts),
            **({"haystack": haystack} if haystack is not None else {}),
            **({"skipped_stories": skipped} if skipped else {}),
            **({"over_line_limit": over} if over else {}),
        }
