"""AA-LCR's prompts in the model's tokens, under either protocol, as token segments (the base's way: a
piece of text is tokenised on its own and the pieces joined, so lengths are exact).

``published``: the card's prompt, every document of the question whole and nothing else, its text
tokenised whole and framed by the chat template; a length holds the questions whose prompt fits it
(the answer decoded past it), and leaves out, never cuts, the others (counted in the cell's
``left_out``): a model of 128k positions is read on the questions it can take whole.

``exact``: the prompt is exactly N minus the answer budget. The question's own documents come first,
whole and in the card's order, numbered as the card numbers them; the rest is filled with other
documents, whole while they fit: the other document sets' (their order drawn from the seed and the
question), then the haystack's prose in document-sized pieces, the last filler cut to the token. The
documents a question needs are never cut: a question whose own prompt is longer than the length is left
out of it (``left_out``).
"""

from __future__ import annotations

import random

from coca_eval.aa_lcr.prompts import ANSWER_TEMPLATE, answer_prompt
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample

OPEN, SPLIT = ANSWER_TEMPLATE.split("{documents_text}")
FILLER_SENTENCES = 40  # sentences of the haystack per filler document


def _pieces() -> tuple[str, str, str]:
    """The template's text before the documents, and after them up to the question (and the rest)."""
    before_question, after_question = SPLIT.split("{question}")
    return OPEN, before_question, after_question


class Packer:
    """The prompts of one tokenizer and chat frame (``builder``: the base's exact-length builder, for
    its ``encode``, head and chat tail)."""

    def __init__(self, params, builder, questions) -> None:
        self.params, self.builder, self.questions = params, builder, questions
        self.head = list(builder.head)
        self.tail = list(builder.chat.tail) if builder.chat is not None else []
        self._cache: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        if text not in self._cache:
            self._cache[text] = self.builder.encode(text)
        return self._cache[text]

    def document(self, number: int, text: str, first: bool) -> tuple[list[int], list[int], list[int]]:
        """A document's opening line, text and closing line (with the blank lines joining it to the
        one before), each tokenised on its own."""
        opening = f"{'' if first else chr(10) * 2}BEGIN DOCUMENT {number}:\n"
        return self.encode(opening), self.encode(text), self.encode(f"\nEND DOCUMENT {number}")

    def own(self, question) -> tuple[list[int], list[int]]:
        """The prompt's tokens before any filler (the question's documents) and after it."""
        start, before_question, after_question = _pieces()
        ids = [*self.head, *self.encode(start)]
        for n, text in enumerate(question.documents, start=1):
            ids += [t for part in self.document(n, text, n == 1) for t in part]
        end = self.encode(before_question) + self.encode(question.question) + self.encode(after_question)
        return ids, [*end, *self.tail]

    def fillers(self, question):
        """The texts that may fill a prompt: other sets' documents (seeded order), then the haystack."""
        others = [d for q in self.questions if q.document_set != question.document_set for d in q.documents]
        others = list(dict.fromkeys(others))
        random.Random(f"{self.params.seed}:{question.question_id}").shuffle(others)
        yield from others
        sentences = self.builder.essay().sentences
        for start in range(0, len(sentences), FILLER_SENTENCES):
            yield " ".join(sentences[start : start + FILLER_SENTENCES])

    def packed(self, question, prompt_length: int) -> tuple[list[int], int] | None:
        """The question's prompt of exactly ``prompt_length`` tokens and its number of fillers (the last
        one cut to the token, its closing line with it), or None when its own documents do not fit."""
        before, after = self.own(question)
        room = prompt_length - len(before) - len(after)
        if room < 0:
            return None
        middle, count = [], 0
        for number, text in enumerate(self.fillers(question), start=len(question.documents) + 1):
            if len(middle) >= room:
                break
            middle += [t for part in self.document(number, text, False) for t in part]
            count += 1
        if len(middle) < room:
            raise CocaEvalError(f"{question.where}: not enough filler text for {room} tokens")
        return [*before, *middle[:room], *after], count

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        out, left_out = [], 0
        for question in self.questions:
            made = self._made(question, length, prompt_length)
            if made is None:
                left_out += 1
                continue
            ids, fillers = made
            if len(out) < samples:
                out.append(self._sample(task, len(out), question, ids, fillers))
        if not out:
            raise CocaEvalError(f"no AA-LCR question of --data {self.params.data} fits length {length}")
        self.left_out = left_out
        return out

    def _made(self, question, length: int, prompt_length: int):
        if self.params.protocol == "exact":
            return self.packed(question, prompt_length)
        text = answer_prompt(list(question.documents), question.question)
        ids = [*self.head, *self.builder.encode(text), *self.tail]  # the card's text, tokenised whole
        return None if len(ids) > length else (ids, 0)  # past this length: left out, never cut

    def _sample(self, task: str, index: int, question, ids: list[int], fillers: int) -> PromptSample:
        detail = {
            "question_id": question.question_id,
            "category": question.category,
            "document_set": question.document_set,
            "question": question.question,
            "documents": list(question.filenames),
            "fillers": fillers,
            "prompt_tokens": len(ids),
        }
        span = (len(self.head), len(ids) - len(self.tail))
        return PromptSample(task, index, ids, (question.answer,), len(self.head), detail, span)
