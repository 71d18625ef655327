"""A conversation as the model reads it: every message rendered through the chat template as one
multi-turn chat (the final user message followed by the opening of the assistant's turn), or, for a
model without a template (``--chat-template none``, or ``auto`` on a tokenizer that has none), as a
plain transcript: ``User:`` / ``Assistant:`` lines before each message, a blank line after it, and
``Assistant:`` on a line of its own at the end. Which one a run used is recorded in its cells.

The template is rendered once per conversation with a marker in place of each message, and the text
around the markers (the frames) and each message are tokenised apart, the way the single-message
frame of :mod:`coca_eval.chat` is; a conversation's tokens are its frames' and messages' in turn. So
the generated conversations can be cut to the token and every message's place in the prompt is known.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coca_eval.errors import CocaEvalError

PLAIN = "plain transcript"
MARK = "@@message{}@@"
ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}


@dataclass(frozen=True)
class Rendered:
    """A conversation's tokens and where each message's content lies in them."""

    ids: list[int]
    spans: list[tuple[int, int]]  # per message: [start, end) of its content's tokens


class ConversationFrame:
    """Renders conversations for one tokenizer and chat template (``None``: the plain transcript);
    ``bos_id`` opens every prompt unless the template's own head already does."""

    def __init__(self, template: str | None, tokenizer, encode: Callable[[str], list[int]], bos_id):
        self.template, self.tokenizer, self.encode, self.bos_id = template, tokenizer, encode, bos_id
        self.digest = hashlib.sha256(template.encode("utf-8")).hexdigest() if template else None
        self._frames: dict[tuple[str, ...], list[list[int]]] = {}

    @property
    def name(self) -> str:
        return "chat template" if self.template else PLAIN

    def frames(self, roles: Sequence[str]) -> list[list[int]]:
        """The tokens before each message and, last, after the final one (through the assistant turn's
        opening): ``len(roles) + 1`` lists, BOS at the front as ``--bos`` asked."""
        key = tuple(roles)
        if key not in self._frames:
            texts = self._template_frames(key) if self.template else _plain_frames(key)
            frames = [self.encode(text) if text else [] for text in texts]
            if self.bos_id is not None and frames[0][:1] != [self.bos_id]:
                frames[0] = [self.bos_id, *frames[0]]
            if len(self._frames) >= 8:  # conversations differ in length: keep a few, not every one
                self._frames.clear()
            self._frames[key] = frames
        return self._frames[key]

    def render(self, roles: Sequence[str], contents: Sequence[list[int]]) -> Rendered:
        """The conversation's tokens from its roles and its messages' tokens."""
        frames = self.frames(roles)
        ids, spans = list(frames[0]), []
        for content, frame in zip(contents, frames[1:], strict=True):
            spans.append((len(ids), len(ids) + len(content)))
            ids.extend(content)
            ids.extend(frame)
        return Rendered(ids, spans)

    def render_messages(self, messages: Sequence[dict]) -> Rendered:
        """A conversation as published (``role`` and ``content`` per message)."""
        return self.render([m["role"] for m in messages], [self.encode(m["content"]) for m in messages])

    def _template_frames(self, roles: tuple[str, ...]) -> list[str]:
        marks = [MARK.format(i) for i in range(len(roles))]
        try:
            text = self.tokenizer.apply_chat_template(
                [{"role": r, "content": m} for r, m in zip(roles, marks, strict=True)],
                chat_template=self.template,
                add_generation_prompt=True,
                tokenize=False,
            )
        except Exception as exc:  # jinja2's errors, a template that refuses the roles' order
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise CocaEvalError(f"the chat template does not render the conversation: {reason}") from None
        pieces = []
        for mark in marks:
            before, found, text = text.partition(mark)
            if not found or mark in text:
                raise CocaEvalError("the chat template does not render each message exactly once, in order")
            pieces.append(before)
        return [*pieces, text]


def _plain_frames(roles: tuple[str, ...]) -> list[str]:
    """``User:``/``Assistant:`` headers on their own lines, a blank line between messages."""
    frames = [f"{ROLE_NAMES.get(roles[0], roles[0].title())}:\n"]
    for role in roles[1:]:
        frames.append(f"\n\n{ROLE_NAMES.get(role, role.title())}:\n")
    return [*frames, "\n\nAssistant:\n"]
