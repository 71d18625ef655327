"""Prompt wordings. ``landmark`` is the canonical landmark-attention text; ``coca`` is the CoCA paper's
Listing 1 ("CoCA: Fusing Position Embedding with Collinear Constrained Attention", App. B.1), kept
word for word, its "Remeber" included."""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.registry import Registry


@dataclass(frozen=True)
class PasskeyTemplate:
    """Segments of ``intro + filler * x + key line + filler * y + question``."""

    name: str
    intro: str
    filler_sentences: tuple[str, ...]
    key_line: str  # with ``{key}`` placeholders
    question: str

    def key_text(self, key: int) -> str:
        return self.key_line.format(key=key)


TEMPLATES = Registry[PasskeyTemplate]("passkey template")

# Both wordings share the intro and the filler sentences; they differ in the key line and question.
_INTRO = (
    "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. "
    "I will quiz you about the important information there."
)
_FILLER = (
    "The grass is green.",
    "The sky is blue.",
    "The sun is yellow.",
    "Here we go.",
    "There and back again.",
)

TEMPLATES.add(
    "landmark",
    PasskeyTemplate(
        name="landmark",
        intro=_INTRO,
        filler_sentences=_FILLER,
        key_line="The pass key is {key}. Remember it. {key} is the pass key.",
        question="What is the pass key? The pass key is",
    ),
)
TEMPLATES.add(
    "coca",
    PasskeyTemplate(
        name="coca",
        intro=_INTRO,
        filler_sentences=_FILLER,
        key_line="The passkey is {key}. Remeber it. {key} is the passkey.",
        question="What is the passkey?",
    ),
)
