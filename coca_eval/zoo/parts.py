"""Books cut into parts, so that a few long books give many evaluation documents.

The zoo's evaluation books are few (two held-out, six by Jane Austen), and the gate's paired tests
resample documents: with two documents no difference can be significant. ``zoo:SPLIT:parts`` cuts
each book into consecutive parts of about ``PART_CHARS`` characters (at line ends, so no sentence
is split mid-word), enough for 16k tokens of the zoo tokenizer per part; a short tail joins the
part before it.
"""

from __future__ import annotations

from dataclasses import replace

from coca_eval.data.documents import Document

PART_CHARS = 80_000


def book_parts(doc: Document, chars: int = PART_CHARS) -> list[Document]:
    """``doc`` as parts ``{doc_id}#1``, ``#2``, ... of at least ``chars`` characters each (but the one
    part of a book shorter than that)."""
    lines, parts, current, size = doc.text.split("\n"), [], [], 0
    for line in lines:
        current.append(line)
        size += len(line) + 1
        if size >= chars:
            parts.append(current)
            current, size = [], 0
    if current and parts and size < chars:
        parts[-1] += current
    elif current:
        parts.append(current)
    return [_part(doc, index, "\n".join(part)) for index, part in enumerate(parts, start=1)]


def _part(doc: Document, index: int, text: str) -> Document:
    source = {**doc.source, "part": index}
    return replace(
        doc, doc_id=f"{doc.doc_id}#{index}", text=text, title=f"{doc.title}, part {index}", source=source
    )
