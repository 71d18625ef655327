"""The cell runner every exact-length generation family runs on: methods x tasks x lengths of scores,
journaled per sample.

A cell is one (method, task, length); the family's task is the cell's ``dataset``, so the runner goes
over the tasks as it goes over a suite's datasets (:mod:`coca_eval.runner`). Samples are the units a
split run divides (``--shard``, torchrun); :func:`~coca_eval.generation.cells.combine_cell` forms a
cell from their records anywhere, without a model. A cell's value is the mean per-sample score x 100.

A family subclasses :class:`GenerationRunner` and says what is its own: its tasks (:meth:`task_of`),
its scorer (:meth:`score`), stop rule, prompt builder (:meth:`prepare`), what a cell records of how its
prompts were made (:meth:`cell_context`), and, answering in two calls, its :meth:`greedy_call`.

Cells decode together: every task with the same answer budget builds prompts of the same length, so
the first cell of a length to run also decodes the unfinished samples of its companions (the run's
other tasks at that length with that budget) in the same batches, and journals each under its own
cell; when a companion's turn comes its samples are already there. With ``--samples auto`` each cell
decides its own rounds, so cells then decode alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from coca_eval.backends.stopping import StopRule
from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.generation.cells import chat_prompt, combine_cell, scored_as_its_output, too_long
from coca_eval.generation.params import PROMPT_ONLY
from coca_eval.generation.task import GenerationTask, keeping, preset_puts_bos, sample_error
from coca_eval.generation.thinking import ModelThinking, chat_thinking, model_thinking, thought_room
from coca_eval.generation.thought import generate_with_thought
from coca_eval.journal import cell_key
from coca_eval.methods import MethodSpec
from coca_eval.results import Cell
from coca_eval.rounds import sample_in_rounds
from coca_eval.sequential import visiting_order


@dataclass(frozen=True)
class PreparedModel:
    """What every cell of one loaded model shares: its prompt builder and chat frame."""

    builder: Any  # the family's prompt builder (an ExactPromptBuilder or one wrapping it)
    chat_digest: str | None  # the chat template's sha256, None without one


def prepare_model(
    params: Any, backend, model: str | None, make_builder: Callable | None = None, thinking=None
) -> PreparedModel:
    """The model's chat frame (``--chat-template``, rendered with ``thinking``'s template variables)
    and exact-length prompt builder, BOS as ``--bos`` says; ``make_builder(encode, bos, chat,
    haystack)`` makes a family's own builder (the base's
    :class:`~coca_eval.generation.assembly.ExactPromptBuilder` when None)."""
    from coca_eval.chat import chat_frame, template_text
    from coca_eval.generation.assembly import ExactPromptBuilder

    if params.bos == "always" and backend.bos_token_id is None:
        raise CocaEvalError("--bos always needs a BOS token, and this tokenizer has none")
    wanted = params.bos == "always" or (params.bos == "auto" and backend.adds_bos)
    bos = backend.bos_token_id if wanted or preset_puts_bos(params, model) else None
    variables = thinking.variables(template_text(params.chat_template, backend.tokenizer)) if thinking else {}
    chat = chat_frame(params.chat_template, backend.tokenizer, variables)
    builder = (make_builder or ExactPromptBuilder)(backend.encode, bos, chat, params.haystack)
    return PreparedModel(builder, chat.digest if chat is not None else None)


def rendered_template(
    params: Any, backend, state: PreparedModel, renders: bool, refusal: str, thinking=None
) -> str | None:
    """The chat template's text where a family tokenises its prompts' rendered text itself (``renders``:
    HELMET's protocol helmet, BABILong's prepared sets), else None; ``--thinking on|off``
    (``thinking``) bound in it. A chat API renders its own, so a chat template with one is refused
    with ``refusal``."""
    from coca_eval.chat import template_text

    if not renders:
        return None
    if state.chat_digest is not None and callable(getattr(backend, "generate_chat", None)):
        raise CocaEvalError(refusal)
    template = template_text(params.chat_template, backend.tokenizer)
    return thinking.bound(template) if thinking is not None else template


@dataclass
class _Pending:
    """One cell's samples still to answer in a decoding call: its key, task, samples and their indices."""

    key: str
    task: Any  # the family's task
    samples: list
    todo: list[int]
    reused: list[bool] = field(default_factory=list)


class GenerationRunner(GenerationTask):
    """A generation family as a :class:`~coca_eval.runner.CellTask` whose ``datasets`` are its tasks;
    a subclass names the family (``name``, ``metric``, ``version``) and gives its hooks."""

    dataset = None
    decodes_thoughts = True

    def __init__(self, params: Any, journal, progress, **options):
        super().__init__(params, journal, progress, **options)
        self.datasets = params.tasks
        self._keys: dict[tuple[str, int, str], str] = {}  # (method label, length, task) -> cell key
        self._built: dict[tuple[str, int, str], list] = {}  # the same -> its samples, built once
        self._reused: dict[str, bool] = {}  # cell key -> whether a companion's call reused a prefix
        self.thinking.check_template(params.chat_template)
        self._plans: dict[str, ModelThinking] = {}  # method label -> its thought plan and context

    def cell_key(self, method: MethodSpec, weights: str, length: int, dataset: str) -> str:
        key = cell_key(self.cell_identity(method, weights, length, dataset))
        self._keys[(method.label, length, dataset)] = key
        return key

    def cell_identity(self, method: MethodSpec, weights: str, length: int, dataset: str) -> dict:
        """What the cell's journal key is made of: the run's identity, its task named apart (under the
        key ``ruler_task`` for every family: the name the keys were first written with, kept so that
        journals written before the base was shared still resume)."""
        identity = self.identity(method, weights, length)
        identity["params"]["tasks"] = None  # a cell is one task, named apart
        identity["ruler_task"] = dataset
        if self.thinking.identity() is not None:  # the defaults leave keys as they were before
            identity["thinking"] = self.thinking.identity()
        return identity

    def _samples(self, method: MethodSpec, state: PreparedModel, length: int, dataset: str) -> list:
        """The cell's samples, built on first use (a companion's are built when it decodes early)."""
        slot = (method.label, length, dataset)
        if slot not in self._built:  # a thought counted in N leaves the prompt that much less room
            room = thought_room(self._plans[method.label].plan, self.params.length_counts)
            self._built[slot] = self.build_samples(state, dataset, length - room)
        return self._built[slot]

    def build_samples(self, state: PreparedModel, dataset: str, length: int) -> list:
        """Every sample the cell's design holds, built by the model's prompt builder."""
        prompt = self.params.prompt_length(length, dataset)
        return state.builder.build(dataset, length, self.params.drawn_samples, self.params.seed, prompt)

    def _companions(
        self, method: MethodSpec, state: PreparedModel, length: int, dataset: str
    ) -> list[_Pending]:
        """The run's other unfinished cells at ``length`` whose prompts decode with this cell's (same
        answer budget, same prompt length), with their samples not yet journaled."""
        budget, found = self.task_of(dataset).answer_budget, []
        own_length = len(self._samples(method, state, length, dataset)[0].ids)
        for other in self.datasets:
            task, key = self.task_of(other), self._keys.get((method.label, length, other))
            if other == dataset or key is None or task.answer_budget != budget:
                continue
            if self.share.finished(self.journal, key) is not None:
                continue
            try:
                samples = self._samples(method, state, length, other)
            except CocaEvalError:  # that cell says so itself when its turn comes
                continue
            done = self._journaled(key, task, samples, self._plans[method.label].plan)
            todo = [i for i in self.share.owned(len(samples)) if str(i) not in done]
            if todo and all(len(samples[i].ids) == own_length for i in todo):
                found.append(_Pending(key, task, samples, todo))
        return found

    def prepare(self, method: MethodSpec, backend) -> PreparedModel:
        """The base's exact-length builder, its task names read by :meth:`task_of`."""
        from coca_eval.generation.assembly import ExactPromptBuilder

        return prepare_model(
            self.params,
            backend,
            method.model,
            partial(ExactPromptBuilder, definitions=self.task_of),
            self.thinking,
        )

    # What a family gives: its tasks, scorer, stop rule and context.
    def task_of(self, dataset: str):
        """The task a cell's ``dataset`` names (its ``answer_budget`` sizes the prompt)."""
        raise NotImplementedError

    def score(self, task, output: str, answers, record: dict | None = None) -> dict:
        """One sample's record of its score (``score`` in [0, 1], and what else the family keeps);
        ``record`` is what the sample recorded (a family whose check reads the question: BABILong)."""
        raise NotImplementedError

    def stop_rule(self, task) -> StopRule:
        return StopRule(task.answer_budget)

    def cell_context(self, state: PreparedModel, task) -> dict:
        """What the cell records of how its prompts were made, beside the chat template and budget."""
        return {}

    def evaluate(
        self, method: MethodSpec, backend, state: PreparedModel, length: int, key: str, dataset: str
    ) -> Cell:
        task = self.task_of(dataset)
        base = dict(task=self.name, method=method.label, metric=self.metric, length=length, dataset=dataset)
        name = f"{method.label} {dataset} @ {length}"
        thinking = self._thinking_of(method, backend)  # a refusal here is the run's, not the cell's
        plan = thinking.plan
        answer = task.answer_budget if self.params.length_counts == PROMPT_ONLY else 0
        answer += (plan.budget if plan is not None else 0) - thought_room(plan, self.params.length_counts)
        try:
            reason = too_long(getattr(backend, "position_limit", None), length, answer)
            if reason is not None:
                raise CocaEvalError(reason)
            samples = self._samples(method, state, length, dataset)
        except CocaEvalError as exc:  # the fixed parts or the answer do not fit: this cell's problem only
            self.progress.start_cell(f"{name} [red]error", 0)
            return Cell(**base, status="error", detail={"error": str(exc)})
        done = self._journaled(key, task, samples, plan)
        mine = self.share.owned(len(samples))
        self.progress.start_cell(name, len(mine), len(done.intersection(map(str, mine))))
        chat = state.chat_digest is not None and callable(getattr(backend, "generate_chat", None))
        through_chat = chat_thinking(self.thinking, plan, chat, self.params.chat_template, backend.tokenizer)
        rule = self.params.stopping_rule()
        own = _Pending(key, task, samples, [])

        def decode(indices: list[int]) -> None:
            """Answer and journal the samples of ``indices`` that are not journaled yet (and, with fixed
            samples, the companions' in the same batches)."""
            own.todo = [i for i in indices if str(i) not in done]
            if chat:  # a chat API: the framed prompts go as messages (see coca_eval.backends.openai_chat)
                prompts = [chat_prompt(samples[i], backend.tokenizer) for i in own.todo]
                record = self._recorder(backend, [own], own, plan)
                backend.generate_chat(prompts, self.stop_rule(task), record, **through_chat)
                own.reused.append(False)
                return
            together = [own, *(self._companions(method, state, length, dataset) if rule is None else [])]
            self._decode_together(backend, together, own, plan)

        def context() -> dict:
            return {
                **self.cell_context(state, task),
                "chat_template": state.chat_digest or "none",
                "answer_budget": task.answer_budget,
                "length_counts": self.params.length_counts,
                "prefix_reuse": any(own.reused) or self._reused.get(key, False),
                **({"chat_completions": True} if chat else {}),
                **thinking.context,
            }

        try:
            if rule is not None:
                return self._sequential_cell(base, key, rule, length, decode, context)
            decode(mine)
        except NonFiniteOutput as exc:  # the error cell keeps the samples answered beside the failed one
            kept = self._journaled(key, task, samples, plan).intersection(map(str, mine))
            raise keeping(exc, self.journal.parts.get(key, {}), kept) from None
        records = {i: self.journal.parts[key][str(i)] for i in mine}
        return self.share.cell(base, records, len(samples), context(), combine_cell)

    def _thinking_of(self, method: MethodSpec, backend) -> ModelThinking:
        """The method's thought plan and what its cells record of thinking, made once per model."""
        if method.label not in self._plans:
            self._plans[method.label] = model_thinking(self.thinking, self.params, backend)
        return self._plans[method.label]

    def _recorder(self, backend, cells: list[_Pending], own: _Pending, plan=None):
        """``on_done`` for a call over ``cells``' unanswered samples in order: journal each answer under
        its own cell (the progress bar counts this cell's); with a thought ``plan`` the answer alone is
        scored, its thought recorded beside it."""
        rows = [(cell, i) for cell in cells for i in cell.todo]

        def record(position: int, tokens: list[int], thought=None) -> None:
            cell, i = rows[position]
            sample = cell.samples[i]
            output = backend.tokenizer.decode(tokens, skip_special_tokens=True)
            entry = {
                "index": sample.index,
                "answers": list(sample.answers),
                "output": output,
                **(thought.record(plan, backend.tokenizer) if thought is not None else {}),
                **self.score(cell.task, output, sample.answers, sample.detail),
                **sample.detail,
            }
            self.journal.record_part(cell.key, str(sample.index), entry)
            if cell is own:
                self.progress.advance()

        return record

    def _decode_together(self, backend, cells: list[_Pending], own: _Pending, plan=None) -> None:
        """One greedy call over every unanswered sample of ``cells`` (each cell its own prefix group).
        A non-finite answer fails this cell only if it is one of its own samples; a companion's failed
        sample stays unjournaled, and that cell meets the failure again on its own turn."""
        rows = [(cell, i) for cell in cells for i in cell.todo]
        if not rows:  # every sample journaled (a resumed cell, or a companion's call answered them)
            return
        budget = self.new_tokens(own.task, plan)
        together = f" of {len(cells)} cells decoding together" if len(cells) > 1 else ""
        self.progress.expect_work(sum(len(cell.samples[i].ids) + budget for cell, i in rows), together)
        generate = self.greedy_call(backend, plan, rows)
        try:
            reused = generate(
                [cell.samples[i].ids for cell, i in rows],
                [cell.samples[i].shared_prefix for cell, i in rows],
                self.stop_rule(own.task),
                self._recorder(backend, cells, own, plan),
                prefix_reuse=self.prefix_reuse,
                batch_size=self.batch_size,
                prefix_groups=[n for n, cell in enumerate(cells) for _ in cell.todo],
            )
        except NonFiniteOutput as exc:
            error = sample_error(exc, {p: i for p, (cell, i) in enumerate(rows) if cell is own})
            if error is not None:
                raise error from None
            return
        own.reused.append(reused)
        for cell in cells[1:]:
            self._reused[cell.key] = reused

    def new_tokens(self, task, plan=None) -> int:  # the most one sample decodes: answer and thought
        return self.stop_rule(task).max_new_tokens + (plan.budget if plan is not None else 0)

    def greedy_call(self, backend, plan, rows: list):
        """The greedy decoding of one call over ``rows`` (pending cell, sample index): the backend's
        own, or a thought before each answer; a family answering in two calls returns its own."""
        return backend.generate_greedy if plan is None else partial(generate_with_thought, backend, plan)

    def _sequential_cell(self, base: dict, key: str, rule, length: int, decode, context) -> Cell:
        """``--samples auto``: rounds of samples in their visiting order until ``rule`` stops on their
        scores; the cell holds the samples spent (in index order) and the rule's outcome, with the order
        they were visited in, in ``detail["sequential"]``."""
        parts = self.journal.parts
        order = visiting_order(self.name, self.params.seed, length, rule.max_samples)
        outcome = sample_in_rounds(order, rule, decode, lambda i: float(parts[key][str(i)]["score"]))
        visited = order[: outcome.spent]
        records = [parts[key][str(i)] for i in sorted(visited)]
        sequential = {**outcome.detail(rule), "visited": visited}
        return combine_cell(base, records, {**context(), "sequential": sequential})

    def _journaled(self, key: str, task, samples: list, plan=None) -> set[str]:
        """The indices of the cell's journaled answers that are still its samples' (same index, same
        references), decoded with a thought apart exactly when ``plan`` says so, and scored as their
        outputs score: a journal written under other samples is not taken for this one, and a part
        whose score is not its output's (a forged or corrupted line) is answered again."""
        return {
            i
            for i, part in self.journal.parts.get(key, {}).items()
            if i.isdigit()
            and int(i) < len(samples)
            and part.get("answers") == list(samples[int(i)].answers)
            and ("thought_tokens" in part) == (plan is not None)
            and scored_as_its_output(task, part, self.score)
        }
