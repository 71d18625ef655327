"""LongBench v2's chain of thought (``--cot``), as its ``pred.py`` runs it: two calls per question.
The first prompt (``0shot_cot``: the document, the question, "Let's think step by step:") is answered
with up to 1,024 tokens; that reasoning, stripped, fills the second prompt (``0shot_cot_ans``: the
question, its choices and the reasoning, the document left out), answered with up to 128 tokens, from
which the letter is read. Both calls are greedy through the backend's own ``generate_greedy``, so
batching works as for any answer; the second prompts share no prefix. A sample records its reasoning
(``cot``) and its length (``cot_tokens``) beside the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coca_eval.backends.stopping import StopRule
from coca_eval.generation.thought import generate_in_two_calls
from coca_eval.longbench.v2_tasks import REASONING_BUDGET


@dataclass(frozen=True)
class Reasoning:
    """One question's chain of thought, as the sample records it."""

    text: str  # decoded and stripped, as pred.py quotes it in the second prompt
    tokens: int

    ended = False  # a reasoning always leads to its answer

    def record(self, plan, tokenizer) -> dict:
        return {"cot": self.text, "cot_tokens": self.tokens}


@dataclass(frozen=True)
class ReasoningCall:
    """The reasoning's call: up to 1,024 tokens; the answer's prompt is ``second(i, reasoning)``, which
    holds no document, so it shares no prefix with the first."""

    second: Callable[[int, str], list[int]]
    decode: Callable
    keeps_prefix = False

    @property
    def rule(self) -> StopRule:
        return StopRule(REASONING_BUDGET)

    def read(self, tokens: list[int]) -> Reasoning:
        return Reasoning(self.decode(tokens, skip_special_tokens=True).strip(), len(tokens))

    def second_prompt(self, i: int, prompt: Sequence[int], first: Reasoning) -> list[int]:
        return self.second(i, first.text)


def generate_with_reasoning(
    backend, second_prompt: Callable[[int, str], list[int]], *args, **options
) -> bool:
    """``generate_greedy`` in two calls (:func:`~coca_eval.generation.thought.generate_in_two_calls`):
    the reasoning of each prompt, then ``second_prompt(i, text)`` answered under ``stop``;
    ``on_done(i, answer_ids, reasoning)``."""
    return generate_in_two_calls(
        backend, ReasoningCall(second_prompt, backend.tokenizer.decode), *args, **options
    )
