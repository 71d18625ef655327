"""The zoo's text, split by book: what the tiny models train on and what they are judged on.

Every book is real pre-1919 public-domain prose from an ordinary package (PyPI or Debian), pinned by
the sha256 of its normalised text. The split is by whole book, so no evaluation ever sees training
text:

- ``train``: Paradise Lost and Botchan (PyPI sdists, the embedded books), Moby Dick (Debian
  ``r-cran-tokenizers``), The Devil's Dictionary (Debian ``dict-devil``) and the King James Bible's
  two testaments (Debian ``sword-text-kjv``, read by :mod:`coca_eval.zoo.sword`);
- ``heldout``: Alice's Adventures in Wonderland and As You Like It (PyPI, so the default run needs no
  Debian package);
- ``outside``: Jane Austen's six novels (Debian ``r-cran-janeaustenr``), reserved as evaluation text
  from outside the training distribution's books;
- ``train-extra``: three SWORD commentaries (Debian ``sword-comm-tdavid``, ``-mhcc``, ``-scofield``),
  about 16M characters, 2.6 times the ``train`` books: a recipe with ``extra_books`` trains on both,
  so the same token budget repeats its text fewer times. The shipped models did not train on them.

As ``--dataset zoo:SPLIT`` (``zoo:SPLIT:parts`` cuts each book into parts of about 80k characters, for
more documents) a split is evaluation text. Reading the Debian packages (R lazy-load data, a dictd
database, SWORD modules) is building the corpus: it is imported only for a book that lives there, so
the default run, on the held-out books from PyPI, runs none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coca_eval.data.books import (
    EMBEDDED_BOOKS,
    book_source,
    cached_book_text,
    load_book_text,
    prose_lines,
)
from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError

if TYPE_CHECKING:
    from coca_eval.zoo.debian_books import DebianBook

SPLIT_BOOKS: dict[str, tuple[str, ...]] = {
    "train": (
        "paradise-lost",
        "botchan",
        "moby-dick",
        "devils-dictionary",
        "kjv-old-testament",
        "kjv-new-testament",
    ),
    "heldout": ("alice", "as-you-like-it"),
    "outside": (
        "emma",
        "mansfield-park",
        "northanger-abbey",
        "persuasion",
        "pride-and-prejudice",
        "sense-and-sensibility",
    ),
    "train-extra": (
        "treasury-of-david",
        "mhcc-old-testament",
        "mhcc-new-testament",
        "scofield-old-testament",
        "scofield-new-testament",
    ),
}
SPLITS = tuple(SPLIT_BOOKS)


def normalise(raw: str) -> str:
    """The same cleaning as the embedded books (:func:`prose_lines`), without per-book cut lines."""
    return "\n".join(prose_lines(raw)).strip()


def debian_book_text(book: DebianBook) -> str:
    """Cached normalised text of one Debian-packaged book, checked against its pinned hash."""
    return cached_book_text(
        book.doc_id,
        book.text_sha256,
        lambda: normalise(book.extract(*_members(book))),
    )


def _members(book: DebianBook) -> list[bytes]:
    from coca_eval.archives import read_member
    from coca_eval.assets import fetch_debian_file

    archive = fetch_debian_file(book.archive)
    return [read_member(archive, member) for member in book.members]


def _debian_source(book: DebianBook) -> dict:
    return {
        "debian_package": book.archive.package,
        "version": book.archive.version,
        "archive_sha256": book.archive.sha256,
        "members": list(book.members),
        "text_sha256": book.text_sha256,
        "license": "public domain (pre-1919)",
        "author": book.author,
        "year": book.year,
    }


def load_book(doc_id: str) -> Document:
    """One zoo book by id, from whichever package holds it."""
    embedded = {b.doc_id: b for b in EMBEDDED_BOOKS}
    if doc_id in embedded:
        b = embedded[doc_id]
        return Document(doc_id, load_book_text(b), b.title, book_source(b))
    from coca_eval.zoo.debian_books import DEBIAN_BOOKS

    if doc_id in DEBIAN_BOOKS:
        b = DEBIAN_BOOKS[doc_id]
        return Document(doc_id, debian_book_text(b), b.title, _debian_source(b))
    raise CocaEvalError(f"unknown zoo book {doc_id!r}")


def load_split(split: str) -> list[Document]:
    """All books of one split, in a fixed order."""
    if split not in SPLIT_BOOKS:
        raise CocaEvalError(f"unknown zoo split {split!r} (known: {', '.join(SPLITS)})")
    return [load_book(doc_id) for doc_id in SPLIT_BOOKS[split]]


def check_source(source: str) -> None:
    """``--dataset zoo:SPLIT[:parts]``: a known split, whole or in parts (refused before any model loads)."""
    split, _, form = source.removeprefix("zoo:").partition(":")
    if split not in SPLITS or form not in ("", "parts"):
        known = ", ".join(f"zoo:{s}[:parts]" for s in SPLITS)
        raise CocaEvalError(f"unknown zoo split in {source!r} (known: {known})")


def load_source(source: str, text_field: str = "text") -> list[Document]:
    """The documents of ``--dataset zoo:SPLIT[:parts]`` (the books carry their text; no field to pick)."""
    from coca_eval.zoo.parts import book_parts

    check_source(source)
    split, _, form = source.removeprefix("zoo:").partition(":")
    books = load_split(split)
    return [part for book in books for part in book_parts(book)] if form == "parts" else books
