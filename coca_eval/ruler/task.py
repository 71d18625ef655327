"""The ``ruler`` task: methods x RULER tasks x lengths of RULER scores, journaled per sample.

A cell is one (method, RULER task, length); the RULER task is the cell's ``dataset``, so the runner
goes over the tasks as it goes over a suite's datasets (:mod:`coca_eval.runner`). Samples are the units
a split run divides (``--shard``, torchrun); :func:`combine_cell` forms a cell from their records
anywhere, without a model. The cell's value is RULER's task score: the mean per-sample score x 100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coca_eval.backends.stopping import StopRule
from coca_eval.errors import CocaEvalError
from coca_eval.generation_task import GenerationTask, preset_puts_bos
from coca_eval.journal import cell_key
from coca_eval.methods import MethodSpec
from coca_eval.results import Cell
from coca_eval.rounds import sample_in_rounds
from coca_eval.ruler.effective import score_interval
from coca_eval.ruler.params import RulerParams
from coca_eval.ruler.scoring import score_sample
from coca_eval.ruler.spec import RULER_METRIC, RULER_TASK_VERSION
from coca_eval.ruler.tasks import RULER_TASKS
from coca_eval.sequential import visiting_order


@dataclass(frozen=True)
class PreparedModel:
    """What every cell of one loaded model shares: its prompt builder and chat frame."""

    builder: Any  # RulerPromptBuilder
    chat_digest: str | None  # the chat template's sha256, None without one


def prepare_model(params: RulerParams, backend, model: str | None) -> PreparedModel:
    """The model's chat frame (``--chat-template``) and prompt builder, BOS as ``--bos`` says."""
    from coca_eval.chat import chat_frame
    from coca_eval.ruler.prompts import RulerPromptBuilder

    if params.bos == "always" and backend.bos_token_id is None:
        raise CocaEvalError("--bos always needs a BOS token, and this tokenizer has none")
    wanted = params.bos == "always" or (params.bos == "auto" and backend.adds_bos)
    bos = backend.bos_token_id if wanted or preset_puts_bos(params, model) else None
    chat = chat_frame(params.chat_template, backend.tokenizer)
    builder = RulerPromptBuilder(backend.encode, bos, chat, params.haystack, params.qa_data)
    return PreparedModel(builder, chat.digest if chat is not None else None)


class RulerRunner(GenerationTask):
    """RULER as a :class:`~coca_eval.runner.CellTask` whose ``datasets`` are the RULER tasks."""

    name, metric, dataset = "ruler", RULER_METRIC, None
    version = RULER_TASK_VERSION

    def __init__(self, params: RulerParams, journal, progress, **options):
        super().__init__(params, journal, progress, **options)
        self.datasets = params.tasks

    def cell_key(self, method: MethodSpec, weights: str, length: int, dataset: str) -> str:
        identity = self.identity(method, weights, length)
        identity["params"]["tasks"] = None  # a cell is one RULER task, named apart
        identity["ruler_task"] = dataset
        return cell_key(identity)

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        return prepare_model(self.params, backend, method.model)

    def evaluate(
        self, method: MethodSpec, backend, state: PreparedModel, length: int, key: str, dataset: str
    ) -> Cell:
        task = RULER_TASKS.get(dataset)
        base = dict(task="ruler", method=method.label, metric=RULER_METRIC, length=length, dataset=dataset)
        name = f"{method.label} {dataset} @ {length}"
        reason = too_long(getattr(backend, "position_limit", None), length, task.answer_budget)
        try:
            if reason is not None:
                raise CocaEvalError(reason)
            samples = state.builder.build(dataset, length, self.params.drawn_samples, self.params.seed)
        except CocaEvalError as exc:  # the fixed parts or the answer do not fit: this cell's problem only
            self.progress.start_cell(f"{name} [red]error", 0)
            return Cell(**base, status="error", detail={"error": str(exc)})
        done = self._journaled(key, samples)
        mine = self.share.owned(len(samples))
        self.progress.start_cell(name, len(mine), len(done.intersection(map(str, mine))))
        reused = []
        chat = state.chat_digest is not None and callable(getattr(backend, "generate_chat", None))

        def decode(indices: list[int]) -> None:
            """Answer and journal the samples of ``indices`` that are not journaled yet."""
            todo = [i for i in indices if str(i) not in done]

            def record(position: int, tokens: list[int]) -> None:
                sample = samples[todo[position]]
                output = backend.tokenizer.decode(tokens, skip_special_tokens=True)
                entry = {
                    "index": sample.index,
                    "answers": list(sample.answers),
                    "output": output,
                    **score_sample(task, output, sample.answers),
                    **sample.detail,
                }
                self.journal.record_part(key, str(sample.index), entry)
                self.progress.advance()

            if chat:  # a chat API: the framed prompts go as messages (see coca_eval.backends.openai_chat)
                prompts = [chat_prompt(samples[i], backend.tokenizer) for i in todo]
                backend.generate_chat(prompts, StopRule(task.answer_budget), record)
                reused.append(False)
                return
            reused.append(
                backend.generate_greedy(
                    [samples[i].ids for i in todo],
                    [samples[i].shared_prefix for i in todo],
                    StopRule(task.answer_budget),
                    record,
                    self.prefix_reuse,
                    batch_size=self.batch_size,
                )
            )

        def context() -> dict:
            return {
                "haystack": state.builder.haystack_name(task),
                "chat_template": state.chat_digest or "none",
                "answer_budget": task.answer_budget,
                "prefix_reuse": any(reused),
                **({"chat_completions": True} if chat else {}),
            }

        rule = self.params.stopping_rule()
        if rule is not None:
            return self._sequential_cell(base, key, rule, length, decode, context)
        decode(mine)
        records = {i: self.journal.parts[key][str(i)] for i in mine}
        return self.share.cell(base, records, len(samples), context(), combine_cell)

    def _sequential_cell(self, base: dict, key: str, rule, length: int, decode, context) -> Cell:
        """``--samples auto``: rounds of samples in their visiting order until ``rule`` stops on their
        scores; the cell holds the samples spent (in index order) and the rule's outcome, with the order
        they were visited in, in ``detail["sequential"]``."""
        parts = self.journal.parts
        order = visiting_order("ruler", self.params.seed, length, rule.max_samples)
        outcome = sample_in_rounds(order, rule, decode, lambda i: float(parts[key][str(i)]["score"]))
        visited = order[: outcome.spent]
        records = [parts[key][str(i)] for i in sorted(visited)]
        sequential = {**outcome.detail(rule), "visited": visited}
        return combine_cell(base, records, {**context(), "sequential": sequential})

    def _journaled(self, key: str, samples: list) -> set[str]:
        """The indices of the cell's journaled answers that are still its samples' (same index, same
        references): a journal written under other samples is not taken for this one."""
        return {
            i
            for i, part in self.journal.parts.get(key, {}).items()
            if i.isdigit() and int(i) < len(samples) and part.get("answers") == list(samples[int(i)].answers)
        }


def chat_prompt(sample, tokenizer):
    """``sample`` as a chat API takes it: its user message as text (decoded as it is, nothing cleaned
    up), its answer prefix opening the assistant's turn, and its tokens to check the server's
    rendering against."""
    from coca_eval.chat import ChatPrompt

    start, end = sample.text_span
    user = tokenizer.decode(
        sample.ids[start:end], skip_special_tokens=False, clean_up_tokenization_spaces=False
    )
    return ChatPrompt(user, sample.answer_prefix, tuple(sample.ids))


def too_long(limit: int | None, length: int, budget: int) -> str | None:
    """Why a ``length``-token prompt and its answer do not fit the model's positions (None if they do)."""
    if limit is None or length + budget <= limit:
        return None
    return f"{length} + {budget} answer tokens exceed the model's {limit} positions"


def combine_cell(base: dict, records: list[dict], context: dict) -> Cell:
    """The cell from every sample's record (in sample order) and how they were decoded (``context``):
    the spec's ``combine``, so a merged or gathered cell is made by this same code. A cell that stopped
    by a rule (``context["sequential"]``) records its confidence sequence's interval, in points: a
    Wilson interval does not hold at a sample count the scores chose."""
    n = len(records)
    score = 100 * sum(float(r["score"]) for r in records) / n
    full = sum(float(r["score"]) == 1.0 for r in records)
    if "sequential" in context:
        interval = [100 * bound for bound in context["sequential"]["interval"]]
    else:
        interval = list(score_interval(score, n))
    detail = {
        "score": score,
        "interval95": interval,
        "full_credit": full / n,
        "samples": records,
        **context,
    }
    return Cell(**base, value=score, n=n, detail=detail)
