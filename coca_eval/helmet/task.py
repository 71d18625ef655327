"""The ``helmet`` task: methods x HELMET tasks x lengths, journaled per sample, on the
generation base's cell runner (:mod:`coca_eval.generation.runner`).

Everything a generation cell does a HELMET cell does the same way (companions decoded together, the
journal and its checks, shards, ``--samples auto``, chat APIs): :class:`HelmetRunner` only replaces the
tasks, the prompts (:mod:`coca_eval.helmet.prompts`), the scorer (HELMET's, per task), the stop rule
and what a cell records of how its prompts were made. A cell's value is the mean of its task's metric
over samples x 100, as HELMET's tables print it.

The stop rule differs by protocol. HELMET's configs set ``stop_new_line`` for RAG, re-rank and ICL, but
its parser reads ``--stop_newline`` (``arguments.py`` l. 47), and the config's key, set as a default
under its own name (l. 64-66), never reaches the model (``load_LLM`` passes ``args.stop_newline``,
``model_utils.py`` l. 1290): HELMET as shipped decodes every answer to its full budget and scores all
its lines. ``--protocol helmet`` does the same, so its numbers stay comparable with HELMET's tables.
``--protocol exact`` keeps the stop at the first newline the configs ask for: the prompts ask for one
short line, and a multi-line answer is not credited for a reference found on a later line.
"""

from __future__ import annotations

from coca_eval.backends.stopping import StopRule
from coca_eval.generation.runner import GenerationRunner, PreparedModel, prepare_model, rendered_template
from coca_eval.helmet.spec import HELMET_METRIC, HELMET_TASK_VERSION
from coca_eval.helmet.tasks import HELMET_TASKS
from coca_eval.methods import MethodSpec


def ends_a_line(text: str) -> bool:
    return "\n" in text


def judged_note(task) -> str:
    """What a judged task's cell says of its score: HELMET's own is a judge's, which needs ``--judge``."""
    return (
        f"HELMET scores {task.name} by {task.judged} (a GPT-4o judge: coca_eval.helmet.judge_prompts), "
        f"which needs --judge; this cell holds {task.metric}, HELMET's metric without a judge"
    )


class HelmetRunner(GenerationRunner):
    """HELMET as a :class:`~coca_eval.runner.CellTask` whose ``datasets`` are the HELMET tasks."""

    name, metric, dataset = "helmet", HELMET_METRIC, None
    version = HELMET_TASK_VERSION

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources

        state = prepare_model(self.params, backend, method.model, thinking=self.thinking)
        template = rendered_template(
            self.params,
            backend,
            state,
            self.params.protocol == "helmet",
            "--protocol helmet with a chat template tokenises HELMET's rendered text itself; a chat "
            "API renders its own: use the completions endpoint, or --protocol exact",
            thinking=self.thinking,
        )
        sources = Sources(self.params.data, self.params.seed, self.params.task_samples)
        builder = HelmetPromptBuilder(
            state.builder, self.params.protocol, sources, backend.tokenizer, template
        )
        return PreparedModel(builder, state.chat_digest)

    def build_samples(self, state: PreparedModel, dataset: str, length: int) -> list:
        """The cell's samples: as many as the task holds (HELMET's count under ``--samples helmet``)."""
        prompt = self.params.prompt_length(length, dataset)
        count = self.params.task_samples(dataset)
        return state.builder.build(dataset, length, count, self.params.seed, prompt)

    def task_of(self, dataset: str):
        return HELMET_TASKS.get(dataset)

    def __init__(self, params, journal, progress, **options):
        from coca_eval.helmet.judged import make_judge

        super().__init__(params, journal, progress, **options)
        self.judge = make_judge(params, journal)

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        """HELMET's metric of the task; with ``--judge`` a judged task's score is the judge's
        (:mod:`coca_eval.helmet.judged`), its metric kept beside it."""
        from coca_eval.helmet.scoring import score_answer

        metrics = score_answer(task, output, answers)
        if not (task.judged and self.judge is not None):
            return metrics
        from coca_eval.helmet.judged import judged_record

        judged = judged_record(self.judge, task, output, answers, record, self.params.data)
        return {**metrics, "unjudged_score": metrics["score"], **judged}

    def greedy_call(self, backend, plan, rows: list):
        """The base's call; with a judge, its answers journaled before they are judged."""
        from coca_eval.judging.answers import judged_call

        generate = super().greedy_call(backend, plan, rows)
        judging = self.judge is not None and plan is None and any(cell.task.judged for cell, _ in rows)
        return judged_call(generate, self.journal, rows) if judging else generate

    def evaluate(self, method, backend, state, length: int, key: str, dataset: str):
        if self.judge is None or not HELMET_TASKS.get(dataset).judged:
            return super().evaluate(method, backend, state, length, key, dataset)
        self.judge.device = str(getattr(backend, "device", "cpu"))
        asked, reused = self.judge.asked, self.judge.reused
        cell = super().evaluate(method, backend, state, length, key, dataset)
        calls = {"asked": self.judge.asked - asked, "reused": self.judge.reused - reused}
        return cell.model_copy(update={"detail": {**cell.detail, "judge_calls": calls}})

    def stops_at_newline(self, task) -> bool:
        """Whether ``task``'s answers end at their first newline: its config's ``stop_new_line`` under
        ``exact``, never under ``helmet`` (HELMET's code ignores that key; see the module doc)."""
        return task.stop_newline and self.params.protocol != "helmet"

    def stop_rule(self, task) -> StopRule:
        return StopRule(task.answer_budget, ends_a_line if self.stops_at_newline(task) else None)

    def cell_identity(self, method: MethodSpec, weights: str, length: int, dataset: str) -> dict:
        """The base's key, plus the stop rule where ``--protocol helmet`` stopped at a newline before
        it decoded full budgets: a journal answered under the old rule is not resumed as this one."""
        identity = super().cell_identity(method, weights, length, dataset)
        task = HELMET_TASKS.get(dataset)
        if self.params.protocol == "helmet" and task is not None and task.stop_newline:
            identity["newline_stop"] = False
        return identity

    def cell_context(self, state: PreparedModel, task) -> dict:
        haystack = state.builder.haystack_name(task)
        return {
            "protocol": self.params.protocol,
            "category": task.category,
            **({"haystack": haystack} if haystack is not None else {}),
            **self._judged_context(task),
        }

    def _judged_context(self, task) -> dict:
        """A judged task's cell: the judge's identity, or the note that its score needs one."""
        if not task.judged:
            return {}
        if self.judge is None:
            return {"judged": judged_note(task)}
        return {"judge": self.params.judge_id}
