"""The ``ruler`` task: methods x RULER tasks x lengths of RULER scores, on the generation base's cell
runner (:mod:`coca_eval.generation.runner`). What is RULER's: its tasks, its scorer
(``string_match_all`` / ``_part``), its prompt builder (the QA sets, RULER's task families) and the
haystack a cell records. The cell's value is RULER's task score: the mean per-sample score x 100.
"""

from __future__ import annotations

from functools import partial

from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model
from coca_eval.methods import MethodSpec
from coca_eval.ruler.scoring import score_sample
from coca_eval.ruler.spec import RULER_METRIC, RULER_TASK_VERSION
from coca_eval.ruler.tasks import RULER_TASKS


class RulerRunner(GenerationRunner):
    """RULER as a :class:`~coca_eval.runner.CellTask` whose ``datasets`` are the RULER tasks."""

    name, metric = "ruler", RULER_METRIC
    version = RULER_TASK_VERSION

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from coca_eval.ruler.prompts import RulerPromptBuilder

        builder = partial(RulerPromptBuilder, qa_data=getattr(self.params, "qa_data", None))
        return prepare_model(self.params, backend, method.model, builder, self.thinking)

    def task_of(self, dataset: str):
        return RULER_TASKS.get(dataset)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        return score_sample(task, output, answers)

    def cell_context(self, state: PreparedModel, task) -> dict:
        return {"haystack": state.builder.haystack_name(task)}
