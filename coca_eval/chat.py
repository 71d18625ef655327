"""Chat templates as token frames around a user message, for exact-length prompts of chat models.

A prompt that must be exactly N tokens cannot be rendered as text and tokenised afterwards: the
template's tokens must be counted inside N. So the template is rendered once, with a sentinel as the
user's message and the assistant's turn opened (``add_generation_prompt``), cut around the sentinel,
and both sides tokenised: a chat prompt is ``head + message tokens + tail + answer prefix tokens``.
The digest names the template's text, so a run records which template framed its prompts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError

SENTINEL = "\u2063COCA_EVAL_USER_MESSAGE\u2063"


@dataclass(frozen=True)
class ChatFrame:
    head: list[int]  # template tokens before the user's message, BOS as the template renders it
    tail: list[int]  # template tokens after the user's message, through the assistant turn's opening
    digest: str  # sha256 of the template text

    def wrap(self, message_ids: list[int], answer_prefix_ids: list[int] = ()) -> list[int]:
        return [*self.head, *message_ids, *self.tail, *answer_prefix_ids]


def chat_frame(option: str, tokenizer, variables: dict | None = None) -> ChatFrame | None:
    """``none``: no frame; ``auto``: the tokenizer's own template, if it has one; else a Jinja file.
    ``variables`` are extra template variables (``enable_thinking``: see
    :mod:`coca_eval.generation.thinking`)."""
    template = template_text(option, tokenizer)
    if template is None:
        return None
    name = "the tokenizer's chat template" if option == "auto" else f"chat template {option}"
    return frame_from_template(template, tokenizer, name, variables)


def template_text(option: str, tokenizer) -> str | None:
    """The Jinja text ``--chat-template`` names: None for ``none`` (or ``auto`` on a tokenizer without
    one), the tokenizer's own for ``auto``, else the file's."""
    if option == "none":
        return None
    if option == "auto":
        template = getattr(tokenizer, "chat_template", None)
        if not template:
            return None
        if isinstance(template, dict):  # several named templates: the default one frames a plain chat
            template = template.get("default") or next(iter(template.values()))
        return template
    path = Path(option).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(
            f"cannot read chat template {option} ({type(exc).__name__}; use auto, none or a Jinja file)"
        ) from None


def frame_from_template(template: str, tokenizer, name: str, variables: dict | None = None) -> ChatFrame:
    text = _render(template, tokenizer, name, variables)
    if text.count(SENTINEL) != 1:
        raise CocaEvalError(f"{name} does not render the user's message exactly once")
    head, tail = text.split(SENTINEL)
    if not tail:
        raise CocaEvalError(f"{name} renders nothing after the user's message (no assistant turn)")
    encode = lambda part: tokenizer(part, add_special_tokens=False).input_ids if part else []  # noqa: E731
    digest = hashlib.sha256(template.encode("utf-8")).hexdigest()
    return ChatFrame(encode(head), encode(tail), digest)


def renders_alike(template: str, tokenizer, variables: dict) -> bool:
    """Whether ``template`` renders a chat the same with ``variables`` as without them: ``auto``
    thinking asks it of ``enable_thinking=True`` to learn whether the template's default thinks."""
    name = "the chat template"
    return _render(template, tokenizer, name) == _render(template, tokenizer, name, variables)


def _render(template: str, tokenizer, name: str, variables: dict | None = None) -> str:
    try:
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": SENTINEL}],
            chat_template=template,
            add_generation_prompt=True,
            tokenize=False,
            **(variables or {}),
        )
    except Exception as exc:  # jinja2's syntax and undefined errors, template-raised exceptions
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"{name} does not render: {type(exc).__name__}: {reason}") from None


@dataclass(frozen=True)
class ChatPrompt:
    """A framed prompt as a chat API takes it: the user's message, the text the assistant's turn opens
    with (RULER's answer prefix; empty for none), and the prompt's tokens through the local frame,
    which the server's own rendering of the two must reproduce. ``history`` holds the turns before the
    user's message when the prompt is a whole conversation (MRCR)."""

    user: str
    prefill: str
    ids: tuple[int, ...]
    history: tuple[dict, ...] = ()
