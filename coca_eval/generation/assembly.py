"""Prompts of exactly N tokens in the model's own tokenizer, chat template and answer prefix included,
for every family whose prompt is a template around a context that fills the tokens left.

A prompt is ``[BOS] + chat head + lead + template before the context + context + template after the
context (the question) + chat tail + answer prefix``. Everything but the context is tokenised first;
the task's draw then fills the context to exactly the tokens left (:mod:`coca_eval.generation.segments`),
and the total is checked for every prompt. Without a chat template the answer prefix follows the
question, as RULER appends it for base models; with one it opens the assistant's turn, as RULER's chat
setting does. With a chat template the BOS token is the template's own: it is added only when the
template's head does not already start with it.

Sample ``i`` of a task at length N draws everything from a seed derived from ``(seed, task, N, i)``:
the same seed gives the same prompts, and lengths are independent draws. (The seed string says
``coca-eval-ruler`` for every family: the prompts every run so far drew come from it.)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coca_eval.chat import ChatFrame
from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Draw, SampleKey
from coca_eval.generation.haystacks import BOOKS, Essay, load_essay
from coca_eval.generation.segments import Encode, Pieces, TooShort
from coca_eval.registry import resolve


@dataclass(frozen=True)
class PromptSample:
    task: str
    index: int
    ids: list[int]  # exactly the length asked for
    answers: tuple[str, ...]
    # Leading tokens taken from a sequence common to every sample of this (task, length): BOS, chat
    # head, template and the haystack up to this sample's first needle (as passkey's prefix). Any two
    # samples agree on the shorter of their two shared prefixes, so a cache of the longest serves all.
    shared_prefix: int
    detail: dict  # JSON-safe: haystack, needle depths, ...
    # For text APIs: the tokens that are text (with a chat template the user's message, else the whole
    # prompt after BOS, answer prefix included) and the answer prefix as text (with a chat template the
    # assistant turn opens with it).
    text_span: tuple[int, int] = (0, 0)
    answer_prefix: str = ""
    # For chat APIs, a family whose prompt is a whole conversation (MRCR): its messages as text, the
    # last one the user's; empty for the families whose prompt is one user message (``text_span``).
    messages: tuple[dict, ...] = ()


@dataclass(frozen=True)
class PromptTask:
    """A task as the builder takes it: ``draw(task, rng, builder, key) -> Draw`` (or its lazy
    ``"module:function"`` name) draws one sample; ``template`` holds ``{context}`` and the draw's fields;
    ``answer_prefix`` follows the question. A family's own task type may stand in for this one if it
    has these attributes and :meth:`wording`."""

    name: str
    draw: Callable[..., Draw] | str
    answer_budget: int
    haystack: str = ""  # what :meth:`ExactPromptBuilder.haystack_name` records ("" for none)
    template: str = "{context}"
    answer_prefix: str = ""

    def wording(self, text: str) -> str:
        """The template's or answer prefix's text as this task words it (as written, here)."""
        return text


REDRAWS = 50  # further draws for a task whose draw may not fit (QA questions with long gold documents)


class ExactPromptBuilder:
    """Builds a family's prompts for one tokenizer (and chat frame), tokenising shared pieces once.

    ``haystack`` is what the ``essay`` haystack reads (``books`` or a path); ``definitions(name)`` gives
    the task a name stands for (for :meth:`build`)."""

    kind = "task"  # how an error names a task (a family's builder names its own: "RULER task")

    def __init__(
        self,
        encode: Encode,
        bos_id: int | None,
        chat: ChatFrame | None,
        haystack: str = BOOKS,
        definitions: Callable[[str], Any] | None = None,
    ):
        self.encode, self.chat, self.bos_id, self.definitions = encode, chat, bos_id, definitions
        self.pieces = Pieces(encode)
        head = list(chat.head) if chat else []
        self._bos = [bos_id] if bos_id is not None and head[:1] != [bos_id] else []
        self.head = self._bos + head
        self.haystack = haystack

    def essay(self) -> Essay:
        return load_essay(self.haystack)

    def haystack_name(self, task: Any) -> str:
        return self.essay().name if task.haystack == "essay" else task.haystack

    def build(
        self, task: str, length: int, samples: int, seed: int, prompt_length: int | None = None
    ) -> list[PromptSample]:
        """Samples ``0 .. samples - 1`` of the task named ``task`` at ``length``."""
        spec = self.definitions(task)
        return [self.build_one(spec, length, i, seed, prompt_length) for i in range(samples)]

    def build_one(
        self, task: Any, length: int, index: int, seed: int, prompt_length: int | None = None
    ) -> PromptSample:
        """Sample ``index`` of ``task`` at ``length``; the same arguments always give the same sample.
        Its prompt has ``prompt_length`` tokens (N minus the answer budget; N when None); the draws
        follow N alone, so both meanings of N draw the same needles, words and questions.

        A task whose draw may be redrawn (QA: another question's gold documents may fit where this
        one's do not) gets up to :data:`REDRAWS` further draws; the sample records how many it took.
        """
        family = resolve(task.draw) if isinstance(task.draw, str) else task.draw
        if prompt_length is not None and prompt_length < 1:
            raise CocaEvalError(
                f"length {length} is too short for {self.kind} {task.name}: its answer budget alone is "
                f"{length - prompt_length} tokens (N counts prompt and answer)"
            )
        for attempt in range(REDRAWS + 1):
            tag = f":{attempt}" if attempt else ""
            rng = random.Random(f"coca-eval-ruler:{seed}:{task.name}:{length}:{index}{tag}")
            draw: Draw = family(task, rng, self, SampleKey(seed, length, index, attempt))
            target = length if prompt_length is None else prompt_length
            try:
                return self._assemble(task, draw, target, index, attempt)
            except TooShort as short:
                if not draw.redraw or attempt == REDRAWS:
                    raise self._too_short(task, short, length, target, draw.redraw) from None
        raise AssertionError("unreachable")

    def _too_short(self, task: Any, short: TooShort, length: int, target: int, redraw: bool) -> CocaEvalError:
        fixed = target if short.fixed is None else short.fixed
        within = "" if target == length else f" ({target} prompt tokens + {length - target} answer)"
        return CocaEvalError(
            f"length {length}{within} is too short for {self.kind} {task.name}: the template, "
            f"question, answer prefix{' and chat template' if self.chat else ''} take {fixed} "
            f"tokens; {short.what}: {short.needed} more needed"
            + (f" (and for {REDRAWS} other draws)" if redraw else "")
        )

    def _framed_example(self, draw: Draw) -> bool:
        return self.chat is not None and draw.example is not None

    def _lead(self, task: Any, draw: Draw) -> list[int]:
        """A worked example with a chat template, as RULER's ``common_words_extraction.py`` (c3f5e3b,
        l. 116-129) writes cwe's: the whole framed prompt of the example with its answer, a newline,
        then the task's frame opens again (its head without a second BOS). The frame's first head is
        the prompt's own; without a chat template the example is the raw ``draw.lead``."""
        if not self._framed_example(draw):
            return []
        user, answer = draw.example
        head = self.chat.head[1:] if self.chat.head[:1] == [self.bos_id] else self.chat.head
        opener = task.answer_prefix.lstrip() + answer + "\n"  # the assistant turn opens with the prefix
        return self.encode(user) + list(self.chat.tail) + self.encode(opener) + list(head)

    def _assemble(self, task: Any, draw: Draw, length: int, index: int, attempt: int) -> PromptSample:
        before, after = task.wording(task.template).split("{context}")
        # a space before the context belongs to the context's first piece (fwe's words carry their own)
        prefix = self._lead(task, draw) + self.encode(
            ("" if self._framed_example(draw) else draw.lead) + before.format(**draw.fields).rstrip(" ")
        )
        answer_prefix = task.wording(task.answer_prefix).format(**draw.fields)
        if self.chat is None:
            question = self.pieces.fresh(after.format(**draw.fields) + answer_prefix)
            suffix = question
        else:
            answer_prefix = answer_prefix.lstrip()
            question = self.pieces.fresh(after.format(**draw.fields))
            suffix = question + list(self.chat.tail) + self.encode(answer_prefix)
        fixed = len(self.head) + len(prefix) + len(suffix)
        try:
            if length - fixed < 1:
                raise TooShort(1, "the context")
            context = draw.fill(length - fixed)
        except TooShort as short:
            short.fixed = fixed
            raise
        ids = self.head + prefix + context.ids + suffix
        if len(ids) != length or len(context.ids) != length - fixed:
            raise AssertionError(f"built {len(ids)} tokens for {task.name} at length {length}")
        shared = len(self.head) + (len(prefix) + context.shared if draw.prefix_shared else 0)
        start = len(self.head)  # after BOS and any chat head: the text a text API is sent
        span = (start, start + len(prefix) + len(context.ids) + len(question))
        detail = {**context.detail, "redraws": attempt} if draw.redraw else context.detail
        answers = draw.answers if context.answers is None else context.answers
        return PromptSample(task.name, index, ids, answers, shared, detail, span, answer_prefix)
