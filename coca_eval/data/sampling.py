"""The paper's document sampling: documents with at least ``doc_tokens`` tokens, drawn with a fixed
seed, each cut to its first ``doc_tokens`` tokens (under the evaluated model's own tokenizer)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError

# Tokenise a growing prefix of each book rather than the whole book: ~4 chars per token in English,
# and the margin keeps the boundary token (possibly split by the cut) far past ``doc_tokens``.
_CHARS_PER_TOKEN_GUESS = 6
_BOUNDARY_MARGIN = 64


@dataclass(frozen=True)
class TokenDoc:
    doc_id: str
    ids: list[int]


def leading_tokens(text: str, encode: Callable[[str], list[int]], count: int) -> list[int] | None:
    """The first ``count`` tokens of ``text`` (None if it is shorter), tokenising only a prefix."""
    chars = count * _CHARS_PER_TOKEN_GUESS
    while True:
        ids = encode(text[:chars])
        if chars >= len(text):
            return ids[:count] if len(ids) >= count else None
        if len(ids) >= count + _BOUNDARY_MARGIN:
            return ids[:count]
        chars *= 2


class TooFewDocuments(CocaEvalError):
    """Fewer documents have ``doc_tokens`` tokens than the draw needs. The counts travel with it so a
    command, which knows where ``num_docs`` and ``doc_tokens`` came from (an option or a preset), can
    say so; library callers get a complete message as it is."""

    def __init__(self, found: int, total: int, doc_tokens: int) -> None:
        self.found, self.total, self.doc_tokens = found, total, doc_tokens
        super().__init__(
            f"only {found} of {total} documents have >= {doc_tokens} tokens; lower --num-docs or --doc-tokens"
        )


def sample_documents(
    docs: Sequence[Document],
    encode: Callable[[str], list[int]],
    num_docs: int | None,
    doc_tokens: int,
    seed: int,
    up_to: bool = False,
) -> list[TokenDoc]:
    """Seeded draw of ``num_docs`` eligible documents (all eligible ones when ``num_docs`` is None).

    With ``up_to``, ``num_docs`` is a ceiling: fewer eligible documents are all used rather than
    refused (a dataset the user named need not hold as many as a preset's protocol asks for).
    """
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    chosen: list[TokenDoc] = []
    for index in order:
        ids = leading_tokens(docs[index].text, encode, doc_tokens)
        if ids is not None:
            chosen.append(TokenDoc(docs[index].doc_id, ids))
        if num_docs is not None and len(chosen) == num_docs:
            return chosen
    if not chosen or (num_docs is not None and not up_to):
        raise TooFewDocuments(len(chosen), len(docs), doc_tokens)
    return chosen
