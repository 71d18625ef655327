"""Parameters of ``coca-eval ppl --metric longppl``: the ppl task's documents and lengths, plus the
key-token rule and the evaluator that applies it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.ppl.params import PplParams, make_params

METRICS = ("ppl", "longppl")
LONGPPL_OPTIONS = ("evaluator_model", "short", "step", "bound", "margin", "key_tokens")


@dataclass(frozen=True)
class LongPplParams(PplParams):
    """A cell at length L reads each document's first L tokens as one text (BOS in front where the
    policy puts one), in one window: the paper's protocol (the evaluated model sees the whole text),
    so ``stride`` plays no part.
    ``evaluator_model`` None: the evaluated model judges its own key tokens. ``key_tokens``: a results
    file of an earlier longppl run whose key spans are used instead of an evaluator's."""

    mode: str = "truncated"
    evaluator_model: str | None = None
    short: int = 4096
    step: int = 1024
    bound: float = 2.0
    margin: float = 2.0
    key_tokens: str | None = None

    def rule(self):
        from coca_eval.ppl.longppl.keys import KeyTokenRule

        return KeyTokenRule(self.short, self.step, self.bound, self.margin)

    def longest_sequence(self) -> int:
        """L tokens of text and a BOS in front of them (engines sized up front need it)."""
        return max(self.lengths) + 1

    def identity(self) -> dict[str, Any]:
        values = super().identity()
        del values["stride"]  # one window per text: the stride changes nothing
        return values


def make_longppl_params(values: dict[str, Any]) -> LongPplParams:
    """The ppl parameters (checked as ppl checks them) with the key-token rule's; ``--mode sliding``
    is refused, since LongPPL reads each text in one window."""
    values = dict(values)
    own = {key: values.pop(key) for key in LONGPPL_OPTIONS if key in values}
    own = {key: value for key, value in own.items() if value is not None}
    if values.get("mode", "truncated") != "truncated":
        raise CocaEvalError(
            "--metric longppl reads each document's first L tokens in one window: use --mode truncated"
        )
    values.pop("mode", None)
    base = make_params(values)
    params = LongPplParams(**{**asdict(base), "mode": "truncated"}, **own)
    params.rule().check()
    return params


def longppl_values(values: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The ppl command's values for a longppl run: a preset's window mode and stride do not apply (one
    window per text), so only a ``--mode`` given on the command line is kept, to be checked, and a
    ``--stride`` given there is refused."""
    if overrides.get("stride") is not None:
        raise CocaEvalError("--metric longppl reads each text in one window: --stride does not apply")
    values = dict(values)
    values.pop("stride", None)
    if overrides.get("mode") is None:
        values.pop("mode", None)
    return values
