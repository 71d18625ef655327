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
from typing import TYPE_CHECKING

from coca_eval.backends.stopping import StopRule
from coca_eval.errors import NonFiniteOutput
from coca_eval.generation.thought import finite_rows
from coca_eval.longbench.v2_tasks import REASONING_BUDGET

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from coca_eval.backends.greedy import GreedyKeywords


@dataclass(frozen=True)
class Reasoning:
    """One question's chain of thought, as the sample records it."""

    text: str  # decoded and stripped, as pred.py quotes it in the second prompt
    tokens: int

    def record(self, plan, tokenizer) -> dict:
        return {"cot": self.text, "cot_tokens": self.tokens}


def generate_with_reasoning(
    backend,
    second_prompt: Callable[[int, str], list[int]],
    prompts: Sequence[Sequence[int]],
    prefix_lengths: Sequence[int],
    stop: StopRule,
    on_done: Callable,
    **options: Unpack[GreedyKeywords],
) -> bool:
    """``generate_greedy`` in two calls: the reasoning of each prompt, then ``second_prompt(i, text)``
    answered under ``stop``; ``on_done(i, answer_ids, reasoning)``. Returns whether a prefix was reused.
    Non-finite logits in either call fail only their rows: the others are answered, then the failures
    are raised together, named by the prompt's position in this call."""
    first: dict[int, list[int]] = {}
    failed: list[NonFiniteOutput] = []
    reused = finite_rows(
        failed,
        backend.generate_greedy,
        prompts,
        prefix_lengths,
        StopRule(REASONING_BUDGET),
        first.__setitem__,
        **options,
    )
    decode = backend.tokenizer.decode
    reasoning = {i: Reasoning(decode(t, skip_special_tokens=True).strip(), len(t)) for i, t in first.items()}
    going = sorted(reasoning)
    options.pop("prefix_groups", None)  # the second prompts hold no shared prefix
    answered = going and finite_rows(
        failed,
        backend.generate_greedy,
        [second_prompt(i, reasoning[i].text) for i in going],
        [0] * len(going),
        stop,
        lambda k, tokens: on_done(going[k], tokens, reasoning[going[k]]),
        rows=going,
        **options,
    )
    if failed:
        raise NonFiniteOutput.of_rows(failed)
    return bool(reused or answered)
