"""A backend double of a reasoning model: before each answer it "thinks" (an open marker, a run of
filler tokens, a close marker), whatever its chat template asked for, as a model trained to always
think would.

It answers from what the RULER prompt builder planted (``tests.ruler.scripted_backend.PLANTED``): a
prompt that is a planted prompt followed by a closed thought gets the references; a bare planted
prompt gets the whole thought and then the references. Its ``generate_greedy`` applies the caller's
:class:`~coca_eval.backends.stopping.StopRule` step by step (``StopRule.cut``), so the thought budget,
the close marker and budget forcing are the generation base's own code, not the double's.
"""

from __future__ import annotations

from tests.generation.digest_backend import AnsweringBackend
from tests.ruler.scripted_backend import PLANTED

OPEN, CLOSE = "<think>", "</think>"
THOUGHT = " hmm" * 50  # 150 zoo tokens: past RULER's 128-token answer budget, holding no needle
CALLS: list[int] = []  # the number of prompts of each generate_greedy call


def thought_ids(tokenizer) -> list[int]:
    """The whole thought the double decodes, markers included (161 zoo tokens)."""
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    return [*encode(OPEN), *encode(THOUGHT), *encode(CLOSE)]


class ThinkingBackend(AnsweringBackend):
    fingerprint = "thinking"

    def answer(self, prompt) -> list[int]:
        planted = max((p for p in PLANTED if tuple(prompt[: len(p)]) == p), key=len)
        rest = tuple(prompt[len(planted) :])
        close = tuple(self.encode(CLOSE))
        reply = self.encode(" " + " ".join(PLANTED[planted]))
        if rest:  # the thought is in the prompt: it must have been closed
            assert rest[-len(close) :] == close, "answer asked for after an open thought"
            return [*reply, self.tokenizer.eos_token_id]
        return [*thought_ids(self.tokenizer), *reply, self.tokenizer.eos_token_id]

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_) -> bool:
        CALLS.append(len(prompts))
        eos = {self.tokenizer.eos_token_id}
        for i, prompt in enumerate(prompts):
            on_done(i, stop.cut(self.answer(prompt), eos, self.tokenizer.decode))
        return False


load = ThinkingBackend.load
