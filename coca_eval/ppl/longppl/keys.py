"""LongPPL (Fang et al., ICLR 2025): perplexity on the tokens that need long context.

Plain perplexity averages over every token, and most tokens are predicted as well from a few thousand
tokens of context as from the whole text, so a model that cannot use long context loses little. LongPPL
keeps the *key tokens* only: an evaluator model reads the text twice, once whole and once with each
token's context cut short, and a token is key when

* its loss with the full context is below ``bound`` (the evaluator predicts it well), and
* its loss rises by more than ``margin`` when the context is cut short (the long context is why).

The short contexts are windows of ``short + step`` tokens starting at ``0, step, 2*step, ...``: the
tokens at positions ``short .. short+step-1`` of a window share its opening ``short`` tokens as their
context. Tokens before position ``short`` are never key (their full context is short already).

Key tokens are stored as character spans of the text (adjacent key tokens merged), so any model,
whatever its tokenizer, is scored on the same key tokens: a token of the evaluated model is key when
its characters lie inside one span. LongPPL is ``exp`` of the mean NLL of those tokens under the
evaluated model reading the whole text.

Tokens are the text's tokens under each model's tokenizer, with BOS in front when ``bos`` asks (the
evaluator's short windows are plain slices of that sequence, so only the first one holds the BOS).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from coca_eval.backends.base import ScoringBackend
from coca_eval.errors import CocaEvalError
from coca_eval.ppl.records import score_problem

Span = tuple[int, int]  # [start, end) character offsets into the text


@dataclass(frozen=True)
class KeyTokenRule:
    """The paper's defaults: a 4096-token short context shared by steps of 1024 tokens; key tokens have
    a full-context loss below 2 nats that rises by more than 2 nats with the short context."""

    short: int = 4096
    step: int = 1024
    bound: float = 2.0
    margin: float = 2.0

    def check(self) -> None:
        """Refuse values that make no rule (one line, before any model loads)."""
        if self.short < 1 or self.step < 1:
            raise CocaEvalError("--longppl-short and --longppl-step must be positive token counts")
        if not (math.isfinite(self.bound) and math.isfinite(self.margin)):
            raise CocaEvalError("--longppl-bound and --longppl-margin must be finite numbers of nats")


@dataclass(frozen=True)
class TokenizedText:
    """A text's token ids under one tokenizer (BOS first when asked) and each token's character span."""

    ids: list[int]
    offsets: list[Span]
    bos: bool


@dataclass(frozen=True)
class KeyScore:
    """The evaluated model's NLL on the key tokens and on every scored token of one text."""

    key_positions: list[int]  # indices into the evaluated model's tokens of the text (BOS not counted)
    key_nll_sum: float
    nll_sum: float
    tokens: int  # scored tokens (every token that has a predecessor, or BOS, in front)
    problem: str | None = None  # why the NLLs are no number (NaN, a log-prob above 0), else None

    @property
    def key_tokens(self) -> int:
        return len(self.key_positions)

    @property
    def longppl(self) -> float | None:
        """None when the text has no key token (LongPPL is undefined, not 1 or 0)."""
        return math.exp(self.key_nll_sum / self.key_tokens) if self.key_positions else None

    @property
    def ppl(self) -> float:
        return math.exp(self.nll_sum / self.tokens)


def tokenize_with_offsets(tokenizer, text: str, bos: bool, role: str) -> TokenizedText:
    """Token ids and character offsets of ``text``; a tokenizer that cannot say which characters each
    token covers (a slow, pure-Python one) or whose offsets do not walk the text in order cannot be
    aligned with another tokenizer, and is refused in one line."""
    try:
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        encoded["offset_mapping"]
    except (NotImplementedError, ValueError, TypeError, KeyError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CocaEvalError(
            f"the {role} tokenizer ({type(tokenizer).__name__}) gives no character offsets ({why}), so its "
            "tokens cannot be aligned with another tokenizer's; use a model with a fast tokenizer"
        ) from None
    offsets = [(int(a), int(b)) for a, b in encoded["offset_mapping"]]
    _check_offsets(offsets, len(text), role)
    ids = list(encoded["input_ids"])
    if bos:
        if tokenizer.bos_token_id is None:
            raise CocaEvalError(f"the {role} tokenizer has no BOS token to put in front")
        ids, offsets = [tokenizer.bos_token_id, *ids], [(0, 0), *offsets]
    return TokenizedText(ids, offsets, bos)


def _check_offsets(offsets: Sequence[Span], length: int, role: str) -> None:
    previous = (0, 0)
    for index, (start, end) in enumerate(offsets):
        if not (0 <= start <= end <= length) or start < previous[0] or end < previous[1]:
            raise CocaEvalError(
                f"the {role} tokenizer's character offsets do not follow the text (token {index}: "
                f"{start}..{end} after {previous[0]}..{previous[1]}), so its tokens cannot be aligned"
            )
        previous = (start, end)


def _score(
    backend: ScoringBackend, ids: Sequence[int], first_logit: int, targets: Sequence[int]
) -> np.ndarray:
    input_ids = torch.tensor([list(ids)], dtype=torch.long)
    nll = backend.score(input_ids, first_logit, torch.tensor([list(targets)], dtype=torch.long))
    return nll[0].numpy()


def full_context_nll(backend: ScoringBackend, ids: Sequence[int]) -> np.ndarray:
    """NLL of ``ids[1:]``, each predicted from every token before it (one forward over the text)."""
    return _score(backend, ids, 0, ids[1:])


def short_windows(total: int, rule: KeyTokenRule) -> list[tuple[int, int]]:
    """``(start, end)`` of each short-context window; it predicts tokens ``start + short .. end - 1``."""
    return [
        (start, min(start + rule.short + rule.step, total))
        for start in range(0, max(0, total - rule.short), rule.step)
    ]


class UnjudgedText(CocaEvalError):
    """The evaluator's NLLs are no number (NaN): no token could be judged key or not."""


def _judged(nll: np.ndarray, first: int) -> np.ndarray:
    """The evaluator's NLLs, or a refusal: a NaN compares false and would silently drop key tokens."""
    problem = score_problem(nll, np.arange(first, first + nll.size))
    if problem is not None:
        raise UnjudgedText(f"the evaluator's scores are no number: {problem}")
    return nll


def key_token_positions(backend: ScoringBackend, ids: Sequence[int], rule: KeyTokenRule) -> list[int]:
    """Positions in ``ids`` of the evaluator's key tokens (see the module's docstring)."""
    if len(ids) <= rule.short:
        return []
    full = _judged(full_context_nll(backend, ids), 1)  # full[j - 1]: token j
    keys = []
    for start, end in short_windows(len(ids), rule):
        first = start + rule.short
        short = _judged(_score(backend, ids[start:end], rule.short - 1, ids[first:end]), first)
        long = full[first - 1 : end - 1]
        key = ((short - long) > rule.margin) & (long < rule.bound)
        keys += [first + int(i) for i in np.flatnonzero(key)]
    return keys


def merge_spans(spans: Sequence[Span]) -> list[Span]:
    """Spans in text order, each run of touching spans (one ends where the next starts) made one."""
    merged: list[Span] = []
    for start, end in spans:
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def find_key_spans(
    evaluator: ScoringBackend, text: str, rule: KeyTokenRule = KeyTokenRule(), bos: bool = False
) -> list[Span]:
    """The key tokens of ``text`` as the evaluator judges them, as merged character spans."""
    tokens = tokenize_with_offsets(evaluator.tokenizer, text, bos, "evaluator")
    positions = key_token_positions(evaluator, tokens.ids, rule)
    return merge_spans([tokens.offsets[j] for j in positions])


def tokens_inside(offsets: Sequence[Span], spans: Sequence[Span]) -> list[int]:
    """Indices of the tokens whose characters lie wholly inside one span (both in text order). A token
    that straddles a span's edge is not key: its prediction is not the key token's."""
    inside, j = [], 0
    for index, (start, end) in enumerate(offsets):
        while j < len(spans) and spans[j][1] < end:
            j += 1  # spans ending before this token's end cannot hold it, nor any later token
        if j < len(spans) and spans[j][0] <= start:
            inside.append(index)
    return inside


def score_on_spans(
    evaluated: ScoringBackend, text: str, spans: Sequence[Span], bos: bool = False
) -> KeyScore:
    """The evaluated model's NLL over the whole text and over its tokens inside the key ``spans``.

    A token without a predecessor (the first one, when there is no BOS) has no NLL and is never key.
    """
    tokens = tokenize_with_offsets(evaluated.tokenizer, text, bos, "evaluated")
    if len(tokens.ids) < 2:
        raise CocaEvalError("the text has fewer than two tokens: nothing to score")
    nll = full_context_nll(evaluated, tokens.ids)  # nll[k]: sequence position k + 1
    shift = int(bos)  # sequence position of the text's token i
    keys = [i for i in tokens_inside(tokens.offsets[shift:], spans) if i + shift >= 1]
    key_nll = nll[[i + shift - 1 for i in keys]]
    problem = score_problem(nll, np.arange(1, nll.size + 1))
    return KeyScore(keys, float(key_nll.sum()), float(nll.sum()), int(nll.size), problem)


def longppl(
    evaluated: ScoringBackend,
    text: str,
    evaluator: ScoringBackend | None = None,
    rule: KeyTokenRule = KeyTokenRule(),
    evaluated_bos: bool = False,
    evaluator_bos: bool = False,
) -> tuple[list[Span], KeyScore]:
    """The key spans of ``text`` (judged by ``evaluator``, by default the evaluated model itself) and the
    evaluated model's score on them."""
    spans = find_key_spans(evaluator or evaluated, text, rule, evaluator_bos)
    return spans, score_on_spans(evaluated, text, spans, evaluated_bos)
