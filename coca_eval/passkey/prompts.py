"""Passkey samples and prompts of exactly N tokens, built from token segments.

Every sample ``i`` at length ``N`` draws its key and depth from a seed derived from ``(seed, N, i)``,
so all methods and tokenizers see the same keys at the same relative depths, and lengths are
independent draws. The prompt is ``[BOS] + intro + filler + key line + filler + question`` in the
model's own tokens; the filler is one token stream (the template's sentences, cycled) shared by every
sample of a length, cut to the token so the total is exactly ``N``. The key line goes in at the
sentence boundary nearest the requested depth.

With a chat template (:class:`~coca_eval.chat.ChatFrame`) the intro, filler, key line and question are
the user's message and the question's answer prefix ("The pass key is") opens the assistant's turn,
as RULER's chat setting puts its answer prefix; the template's tokens count inside ``N``. Without one
the prompt is exactly what it always was.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coca_eval.errors import CocaEvalError
from coca_eval.passkey.templates import PasskeyTemplate

if TYPE_CHECKING:
    from coca_eval.chat import ChatFrame

KEY_RANGE = (10000, 99999)


@dataclass(frozen=True)
class PasskeySample:
    index: int
    key: int
    depth: float  # requested position of the key line in the filler, as a fraction of it


def parse_depths(text: str) -> str | tuple[float, ...]:
    """``stratified`` (default), ``random``, or a comma list of fractions cycled over the samples."""
    if text in ("stratified", "random"):
        return text
    try:
        grid = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise CocaEvalError(
            f"invalid --depths {text!r}: stratified, random or fractions like 0,0.5,1"
        ) from None
    if not grid or any(not 0 <= d <= 1 for d in grid):
        raise CocaEvalError(f"invalid --depths {text!r}: fractions must lie in [0, 1]")
    return grid


def draw_samples(seed: int, length: int, count: int, depths: str | tuple[float, ...]) -> list[PasskeySample]:
    samples = []
    for i in range(count):
        rng = random.Random(f"coca-eval-passkey:{seed}:{length}:{i}")
        key = rng.randint(*KEY_RANGE)
        if depths == "stratified":
            depth = (i + rng.random()) / count
        elif depths == "random":
            depth = rng.random()
        else:
            depth = depths[i % len(depths)]
        samples.append(PasskeySample(i, key, depth))
    return samples


@dataclass(frozen=True)
class PasskeyPrompt:
    ids: list[int]
    key_start: int  # index of the key line's first token
    key_end: int
    shared_prefix: (
        int  # leading tokens identical for every sample of this length (BOS, intro, filler before key)
    )

    @property
    def distance(self) -> int:
        """Tokens from the key line's first token to the end of the prompt."""
        return len(self.ids) - self.key_start


def split_question(question: str) -> tuple[str, str]:
    """``What is the pass key? The pass key is`` -> the question asked and the answer's opening words."""
    end = question.rfind("?") + 1
    return (question[:end], question[end:].strip()) if end else (question, "")


class PromptBuilder:
    """Tokenises a template's segments once for one tokenizer and assembles exact-length prompts."""

    def __init__(
        self,
        template: PasskeyTemplate,
        encode: Callable[[str], list[int]],
        bos_id: int | None,
        chat: ChatFrame | None = None,
    ):
        self.template, self.encode, self.chat = template, encode, chat
        chat_head = list(chat.head) if chat is not None else []
        self.bos = [bos_id] if bos_id is not None and chat_head[:1] != [bos_id] else []
        self.head = self.bos + chat_head
        self._dummy_prefix = self._adds_dummy_prefix()
        self.intro = encode(template.intro)
        self.sentences = [self._segment(s) for s in template.filler_sentences]
        if chat is None:
            self.question = self._segment(template.question)
        else:
            asked, answer_prefix = split_question(template.question)
            opening = encode(answer_prefix) if answer_prefix else []
            self.question = self._segment(asked) + list(chat.tail) + opening

    def _adds_dummy_prefix(self) -> bool:
        """SentencePiece-style tokenizers already read a segment start as after a space."""
        return self.encode("a") == self.encode(" a")[-len(self.encode("a")) :] and len(self.encode(" a")) > 1

    def _segment(self, text: str) -> list[int]:
        return self.encode(text if self._dummy_prefix else " " + text)

    def key_tokens(self, key: int) -> list[int]:
        return self._segment(self.template.key_text(key))

    def filler(self, n_tokens: int) -> tuple[list[int], list[int]]:
        """The first ``n_tokens`` of the cycled filler and its sentence boundaries (token offsets)."""
        stream, bounds, i = [], [0], 0
        while len(stream) < n_tokens:
            stream += self.sentences[i % len(self.sentences)]
            bounds.append(len(stream))
            i += 1
        return stream[:n_tokens], [b for b in bounds if b <= n_tokens]

    def build(self, sample: PasskeySample, length: int) -> PasskeyPrompt:
        key = self.key_tokens(sample.key)
        n_filler = length - len(self.head) - len(self.intro) - len(key) - len(self.question)
        if n_filler < 1:
            raise CocaEvalError(
                f"length {length} is too short for the passkey prompt ({length - n_filler + 1}+)"
            )
        stream, bounds = self.filler(n_filler)
        at = _nearest(bounds, sample.depth * n_filler)
        head = self.head + self.intro + stream[:at]
        ids = head + key + stream[at:] + self.question
        if len(ids) != length:
            raise AssertionError(f"built {len(ids)} tokens for length {length}")
        return PasskeyPrompt(ids, len(head), len(head) + len(key), len(head))


def _nearest(bounds: list[int], target: float) -> int:
    i = bisect.bisect_left(bounds, target)
    candidates = bounds[max(0, i - 1) : i + 1]
    return min(candidates, key=lambda b: (abs(b - target), b))
