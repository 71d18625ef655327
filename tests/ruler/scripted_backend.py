"""A backend double for RULER runs: it answers each prompt from what the prompt builder planted in it.

``PLANTED`` maps a prompt's token ids to its references; :func:`record_planted` fills it by wrapping
the prompt builder, so the double never parses a prompt. ``MODE`` says what it answers: ``planted``
(every reference, space-separated: the zoo's tokenizer spells five of vt's variable names in 28 of its
30-token budget), ``empty`` (nothing), ``chance`` (the references for about half the prompts, chosen by
a hash of the prompt, nothing for the rest), ``hedged`` (a first line that names nothing, the first
reference on the next: decoded under the task's stop rule, as an engine that cuts where the rule
fires) or ``fail_after`` (raise after that many answers, to interrupt a run). It
loads only the tokenizer of a model directory or preset.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tests.generation.digest_backend import AnsweringBackend

PLANTED: dict[tuple[int, ...], tuple[str, ...]] = {}
MODE: dict[str, Any] = {"answer": "planted", "fail_after": None, "answered": 0}
HEDGE = " Not sure.\n"  # short: the zoo's tokenizer spells a RAG answer in 9 of its 20 tokens


class Interrupted(RuntimeError):
    """Stands for a kill in the middle of a cell."""


def record_planted(monkeypatch) -> None:
    from coca_eval.generation.assembly import ExactPromptBuilder

    build_one = ExactPromptBuilder.build_one

    def recording(self, task, length, index, seed, prompt_length=None):
        built = build_one(self, task, length, index, seed, prompt_length)
        PLANTED[tuple(built.ids)] = built.answers
        return built

    monkeypatch.setattr(ExactPromptBuilder, "build_one", recording)


class ScriptedBackend(AnsweringBackend):
    fingerprint = "scripted"

    def generate_greedy(self, prompts, prefix_lengths, stop, on_done, prefix_reuse=True, **_) -> bool:
        for i, prompt in enumerate(prompts):
            if MODE["fail_after"] is not None and MODE["answered"] >= MODE["fail_after"]:
                raise Interrupted("killed")
            if MODE["answer"] == "hedged":
                text = HEDGE + PLANTED[tuple(prompt)][0]
                on_done(i, stop.cut(self.encode(text), set(), self.tokenizer.decode))
            else:
                text = " " + " ".join(PLANTED[tuple(prompt)]) if _answers(prompt) else ""
                on_done(i, self.encode(text)[: stop.max_new_tokens])
            MODE["answered"] += 1
        return False


def _answers(prompt) -> bool:
    """Whether the double answers ``prompt`` with its references (see ``MODE``)."""
    if MODE["answer"] == "chance":
        return hashlib.sha256(repr(list(prompt)).encode()).digest()[0] % 2 == 0
    return MODE["answer"] == "planted"


load = ScriptedBackend.load
