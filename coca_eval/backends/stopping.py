"""When greedy decoding stops: the rule a task hands every backend's ``generate_greedy``.

Decoding always stops at EOS and at the task's token budget. A task whose answer can be decided
earlier adds ``decided(text)``: passkey stops once the output's first integer is complete, since the
tokens after it cannot change the score; a task that scores the whole answer (RULER) leaves it out.
A thought phase (:mod:`coca_eval.generation.thought`) adds ``stop_sequences``: token id sequences
(the end-of-thought marker) that end decoding once the output ends with one, matched on ids so a
marker is never looked for in free text. Backends that decode step by step stop on the rule; engines
that cannot stop on a custom rule generate more and cut where the rule would have stopped
(:meth:`StopRule.cut`). Greedy decoding is deterministic, so both give the same tokens, and no
backend needs to know which task is asking.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

Decode = Callable[[Sequence[int]], str]


@dataclass(frozen=True)
class StopRule:
    """EOS, ``max_new_tokens``, the output ending with one of ``stop_sequences`` (token ids), or (when
    given) ``decided`` true of the decoded output so far."""

    max_new_tokens: int
    decided: Callable[[str], bool] | None = None
    stop_sequences: tuple[tuple[int, ...], ...] = ()

    @property
    def stops_early(self) -> bool:
        """Whether the rule may fire before EOS or the budget (engines then decode in rounds)."""
        return self.decided is not None or bool(self.stop_sequences)

    def stops_after(self, generated: Sequence[int], eos: set[int], decode: Decode) -> bool:
        """Whether decoding stops once ``generated`` (non-empty) has been produced."""
        if generated[-1] in eos or len(generated) >= self.max_new_tokens:
            return True
        if any(len(s) <= len(generated) and tuple(generated[-len(s) :]) == s for s in self.stop_sequences):
            return True
        return self.decided is not None and self.decided(decode(generated))

    def first_stop(self, tokens: Sequence[int], eos: set[int], decode: Decode) -> int | None:
        """How many of ``tokens`` step-by-step decoding keeps before the rule fires (None: not yet)."""
        for end in range(1, min(len(tokens), self.max_new_tokens) + 1):
            if self.stops_after(tokens[:end], eos, decode):
                return end
        return None

    def cut(self, tokens: Sequence[int], eos: set[int], decode: Decode) -> list[int]:
        """The prefix of a greedy continuation that step-by-step decoding under this rule produces."""
        end = self.first_stop(tokens, eos, decode)
        return list(tokens[: self.max_new_tokens if end is None else end])


def stop_rule(stop: StopRule | int) -> StopRule:
    """A rule as given, or a bare token budget (stop at EOS or after that many tokens)."""
    return stop if isinstance(stop, StopRule) else StopRule(int(stop))
