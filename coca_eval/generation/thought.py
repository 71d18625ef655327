"""Decoding a thought, then the answer: two greedy calls through the backend's own ``generate_greedy``.

Why two calls and not one: the thought and the answer have budgets of their own (the think budget,
the task's answer budget) and stop rules of their own (the close marker; the task's EOS, budget and
``decided`` rule), and a thought still open at its budget must be closed by appending the close
marker (budget forcing, as s1 does) before the answer starts. Both calls go through the backend's
greedy path, so batching, prefix reuse and non-finite checks work as for any answer; the answer call
prefills prompt + thought again (the prompt's shared prefix is still shared).

The thought is split from the answer by token ids: the first call stops when its output ends with
the close marker's ids, and whatever the second call produces is the answer. No text is searched.
A thought that ends at EOS before its close marker leaves no answer (an empty output).

LongBench v2's chain of thought is the same two calls with another first call
(:mod:`coca_eval.longbench.v2_reasoning`): :func:`generate_in_two_calls` runs either, so the
failures of either call are handled, and its rows answered, one way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from coca_eval.backends.special_tokens import eos_ids
from coca_eval.backends.stopping import StopRule
from coca_eval.errors import NonFiniteOutput
from coca_eval.generation.thinking import ThoughtPlan

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from coca_eval.backends.greedy import GreedyKeywords


@dataclass(frozen=True)
class Thought:
    """One sample's thought: the ids decoded in it, whether the budget closed it (the close marker's
    ids then appended), and what follows the prompt before the answer (``tokens`` + forced close)."""

    tokens: tuple[int, ...]
    closed_by_budget: bool
    ended: bool  # EOS came before the close marker: no answer follows

    def continuation(self, plan: ThoughtPlan) -> list[int]:
        return [*self.tokens, *(plan.close_ids if self.closed_by_budget else ())]

    def record(self, plan: ThoughtPlan, tokenizer) -> dict:
        """What a sample records of its thought beside its answer."""
        return {
            "thought": tokenizer.decode(self.continuation(plan), skip_special_tokens=False),
            "thought_tokens": len(self.tokens),
            "thought_closed_by_budget": self.closed_by_budget,
        }


def split_thought(plan: ThoughtPlan, generated: Sequence[int], eos: set[int]) -> Thought:
    """The thought the first call's ``generated`` ids make under ``plan``: closed by its own marker,
    ended by EOS, or cut by the budget (then closed by the marker appended)."""
    close = plan.close_ids
    if close and tuple(generated[-len(close) :]) == close:
        return Thought(tuple(generated), False, False)
    if generated and generated[-1] in eos:
        return Thought(tuple(generated[:-1]), False, True)
    return Thought(tuple(generated), len(generated) >= plan.budget, False)


class FirstCall(Protocol):
    """The first of a decoding's two calls (a thought; LongBench v2's reasoning): its stop ``rule``,
    what a row's output becomes (:meth:`read`, whose ``ended`` says no answer follows) and the second
    prompt built from it. ``keeps_prefix``: the second prompts extend the first ones, so their shared
    prefix (``prefix_lengths``, ``prefix_groups``) stays shared."""

    rule: StopRule
    keeps_prefix: bool

    def read(self, tokens: list[int]) -> Any: ...

    def second_prompt(self, i: int, prompt: Sequence[int], first: Any) -> list[int]: ...


@dataclass(frozen=True)
class ThoughtCall:
    """A thought's call: up to the think budget, stopped at the close marker; the answer's prompt is
    the prompt, the thought and the close marker the budget forced."""

    plan: ThoughtPlan
    eos: set[int]
    keeps_prefix = True

    @property
    def rule(self) -> StopRule:
        return StopRule(self.plan.budget, stop_sequences=(self.plan.close_ids,))

    def read(self, tokens: list[int]) -> Thought:
        return split_thought(self.plan, tokens, self.eos)

    def second_prompt(self, i: int, prompt: Sequence[int], first: Thought) -> list[int]:
        return [*prompt, *first.continuation(self.plan)]


def generate_with_thought(backend, plan: ThoughtPlan, *args, **options) -> bool:
    """``generate_greedy`` with a thought before each answer (:func:`generate_in_two_calls`):
    ``on_done(i, answer_ids, thought)`` for prompt ``i``."""
    eos = eos_ids(_generation_config(backend), backend.tokenizer)
    return generate_in_two_calls(backend, ThoughtCall(plan, eos), *args, **options)


def generate_in_two_calls(
    backend,
    first: FirstCall,
    prompts: Sequence[Sequence[int]],
    prefix_lengths: Sequence[int],
    stop: StopRule,
    on_done: Callable[[int, list[int], Any], None],
    **options: Unpack[GreedyKeywords],
) -> bool:
    """``generate_greedy`` in two calls: ``first``'s for every prompt, then under ``stop`` the answer of
    each row whose first output did not end it; ``on_done(i, answer_ids, first_output)`` for prompt
    ``i`` (no answer ids where it ended). Returns whether either call reused a prefix. Non-finite
    logits in either call fail only their rows: the others are answered, then the failures are raised
    together, named by the prompt's position in this call."""
    firsts: dict[int, Any] = {}
    failed: list[NonFiniteOutput] = []

    def first_done(i: int, tokens: list[int]) -> None:
        firsts[i] = first.read(tokens)

    reused = finite_rows(
        failed,
        backend.generate_greedy,
        prompts,
        prefix_lengths,
        first.rule,
        first_done,
        **options,
    )
    for i in sorted(i for i, output in firsts.items() if output.ended):
        on_done(i, [], firsts.pop(i))
    going = sorted(firsts)
    groups = options.pop("prefix_groups", None)
    if groups is not None and first.keeps_prefix:
        options["prefix_groups"] = [groups[i] for i in going]
    answered = going and finite_rows(
        failed,
        backend.generate_greedy,
        [first.second_prompt(i, prompts[i], firsts[i]) for i in going],
        [prefix_lengths[i] if first.keeps_prefix else 0 for i in going],
        stop,
        lambda k, tokens: on_done(going[k], tokens, firsts[going[k]]),
        rows=going,
        **options,
    )
    if failed:
        raise NonFiniteOutput.of_rows(failed)
    return bool(reused or answered)


def finite_rows(
    failed: list[NonFiniteOutput], call: Callable, *args, rows: list[int] | None = None, **kwargs
):
    """``call(*args, **kwargs)`` (a ``generate_greedy``) whose non-finite rows are appended to ``failed``
    instead of raised, so a two-call decoding answers every other row before the failures are raised
    together. ``rows``: the whole call's position of each of this call's prompts, for the message."""
    try:
        return call(*args, **kwargs)
    except NonFiniteOutput as exc:
        failed.append(exc if rows is None else _renamed(exc, rows))
        return False


def _renamed(exc: NonFiniteOutput, going: list[int]) -> NonFiniteOutput:
    """A later call's failures named by their prompts' positions in the whole call."""
    rows = {going[k]: text.replace(f"sample {k}:", f"sample {going[k]}:", 1) for k, text in exc.rows.items()}
    return NonFiniteOutput(next(iter(rows.values()), str(exc)), rows)


def _generation_config(backend):
    model = getattr(backend, "model", None)
    return getattr(model, "generation_config", None)
