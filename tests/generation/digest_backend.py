"""A backend double whose answer is a function of every prompt token: a move of the generation base
that changed one token of one prompt changes that sample's recorded output.

Each answer is the hex digest of the prompt's ids followed by a stretch of the prompt itself (12 tokens
from a position the digest picks), so some answers hold a needle and score. No model runs and no float
is computed, so the outputs are the same on every machine. It loads only the tokenizer of a model
directory or preset.
"""

from __future__ import annotations

import hashlib


def answer_ids(tokenizer, prompt) -> list[int]:
    """The answer's token ids for ``prompt``: its digest, then 12 of its own tokens."""
    digest = hashlib.sha256(repr(list(prompt)).encode()).hexdigest()
    start = int(digest[:8], 16) % max(1, len(prompt) - 12)
    quoted = tokenizer.decode(list(prompt[start : start + 12]), skip_special_tokens=True)
    return tokenizer(f" {digest[:16]} {quoted}", add_special_tokens=False).input_ids


class AnsweringBackend:
    """A backend double over a tokenizer alone: each prompt's answer is :meth:`answer`'s, cut to the
    budget; a subclass says how it answers."""

    position_limit = None
    trained_context = None
    fingerprint = "answering"

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer

    @property
    def bos_token_id(self):
        return self.tokenizer.bos_token_id

    @property
    def adds_bos(self) -> bool:
        return False

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False).input_ids

    def answer(self, prompt) -> list[int]:
        raise NotImplementedError

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_) -> bool:
        budget = stop if isinstance(stop, int) else stop.max_new_tokens
        for i, prompt in enumerate(prompts):
            on_done(i, self.answer(prompt)[:budget])
        return False

    @classmethod
    def load(cls, method, request) -> AnsweringBackend:
        from transformers import AutoTokenizer

        from coca_eval.models.presets import resolve_model

        return cls(AutoTokenizer.from_pretrained(resolve_model(method.model)[0]))


class DigestBackend(AnsweringBackend):
    fingerprint = "digest"

    def answer(self, prompt) -> list[int]:
        return answer_ids(self.tokenizer, prompt)


load = DigestBackend.load
