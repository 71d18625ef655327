"""HELMET's prompt as its ``tokenize()`` makes it (``model_utils.py`` at 4526dfb), for ``--protocol helmet``.

The text is HELMET's template filled; without a chat template it is tokenised with the tokenizer's
special tokens (HELMET calls the tokenizer plainly), with one it is rendered by the template with the
assistant's turn opened and tokenised without adding any. When it is longer than N minus the answer
budget, the context is cut: tokenised alone (special tokens included, as HELMET does), cut where its
last ``excess`` tokens begin, and the prompt is built and tokenised again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class HelmetPrompt:
    ids: list[int]
    cut: int  # context tokens cut (0: the prompt fit)
    text_start: int  # special tokens before the text (BOS)


def helmet_tokenize(
    tokenizer: Any,
    template: str,
    prefix: str,
    fields: dict[str, str],
    chat_template: str | None,
    max_length: int,
    budget: int,
) -> HelmetPrompt:
    """HELMET's prompt ids for ``fields`` at ``max_length`` with ``budget`` answer tokens."""
    fields = dict(fields)
    ids = _tokenize(tokenizer, template, prefix, fields, chat_template)
    excess = len(ids) - (max_length - budget)
    if excess > 0:
        fields["context"] = cut_context(tokenizer, fields["context"], excess)
        ids = _tokenize(tokenizer, template, prefix, fields, chat_template)
    bos = getattr(tokenizer, "bos_token_id", None)
    return HelmetPrompt(ids, max(excess, 0), int(bool(ids) and bos is not None and ids[0] == bos))


def _tokenize(tokenizer, template: str, prefix: str, fields: dict, chat_template: str | None) -> list[int]:
    if chat_template is None:  # HELMET's prompt_template: the user template, a newline, the answer prefix
        return list(tokenizer((template + "\n" + prefix).format(**fields)).input_ids)
    user = template.format(**fields)
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": user}],
        chat_template=chat_template,
        tokenize=False,
        add_generation_prompt=True,
    )
    return list(tokenizer(text, add_special_tokens=False).input_ids)


def cut_context(tokenizer, context: str, excess: int) -> str:
    """``context`` without its last ``excess`` tokens, cut as HELMET cuts it."""
    if not getattr(tokenizer, "is_fast", False):
        ids = tokenizer(context).input_ids
        if excess >= len(ids):
            raise _too_short(excess, len(ids))
        return tokenizer.decode(ids[:-excess])
    offsets = tokenizer([context], return_offsets_mapping=True)["offset_mapping"][0]
    if excess > len(offsets):
        raise _too_short(excess, len(offsets))
    return context[: offsets[-excess][0]]


def _too_short(excess: int, tokens: int) -> CocaEvalError:
    return CocaEvalError(
        f"the prompt is {excess} tokens over N minus the answer budget and its context has only {tokens}: "
        "the fixed parts (instruction, demonstrations, question) do not fit this length"
    )
