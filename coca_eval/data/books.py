"""The embedded default corpus: four real public-domain books found inside PyPI source archives.

Long-context perplexity needs long, real, clean prose. PG-19 needs a dataset hub; these books need only
PyPI: brotli and sentencepiece ship Project Gutenberg texts as test data. Both the archives and the
normalised texts are pinned by sha256, so a changed upstream or a changed normaliser fails loudly
instead of silently shifting every perplexity number.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from coca_eval.archives import read_member
from coca_eval.assets import PypiFile, cache_dir, fetch_pypi_file
from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic

BROTLI_SDIST = PypiFile(
    "brotli",
    "1.2.1",
    "brotli-1.2.1.tar.gz",
    "02b2f7b5a83485efe448a44ddf7983def05c3bb1dcf917d4f7154070260e13de",
    sdist=True,
)
SENTENCEPIECE_SDIST = PypiFile(
    "sentencepiece",
    "0.2.3",
    "sentencepiece-0.2.3.tar.gz",
    "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
    sdist=True,
)

_PD = "public domain (pre-1919)"


@dataclass(frozen=True)
class EmbeddedBook:
    """One book: where it lives, what its normalised text hashes to, and any book-specific trimming.

    ``first_line``/``last_line`` cut transcriber material that has no Gutenberg marker (the 1992 release
    essay before Paradise Lost, the credit line and typo list around Botchan); both lines are kept.
    """

    doc_id: str
    title: str
    author: str
    year: str
    archive: PypiFile
    member: str
    text_sha256: str
    license: str = _PD
    first_line: str | None = None
    last_line: str | None = None


EMBEDDED_BOOKS: tuple[EmbeddedBook, ...] = (
    EmbeddedBook(
        "alice",
        "Alice's Adventures in Wonderland",
        "Lewis Carroll",
        "1865",
        BROTLI_SDIST,
        "brotli-1.2.1/tests/testdata/alice29.txt",
        "f69fe92a7d03d78989c92f720aa55d68dd87dbf5c3abed7918a86e5068d10739",
    ),
    EmbeddedBook(
        "paradise-lost",
        "Paradise Lost",
        "John Milton",
        "1667",
        BROTLI_SDIST,
        "brotli-1.2.1/tests/testdata/plrabn12.txt",
        "89d6d651730ded14ad0d78c6355a6e17bdfad069fa4774b8eb07184f256ed5fd",
        first_line="Paradise Lost",
    ),
    EmbeddedBook(
        "as-you-like-it",
        "As You Like It",
        "William Shakespeare",
        "c. 1599",
        BROTLI_SDIST,
        "brotli-1.2.1/tests/testdata/asyoulik.txt",
        "a8cfc51c62d2ddc694585d23ecd1646e85b055af345df6956aab20f9502a4bf8",
    ),
    EmbeddedBook(
        "botchan",
        "Botchan (Master Darling)",
        "Natsume Soseki, tr. Yasotaro Morri",
        "1906; English translation 1918",
        SENTENCEPIECE_SDIST,
        "sentencepiece-0.2.3/test/botchan.txt",
        "97b3337dfa87bf293725bceb5104ff2f8faf6ad1bc5ba5112f24ae3d95b172ef",
        license="public domain (1918 translation; this text is its 1919 revision)",
        first_line="BOTCHAN (MASTER DARLING)",
        last_line="--(THE END)--",
    ),
)

_GUTENBERG_START = re.compile(r"^\*\*\* ?START OF|^\*END\*THE SMALL PRINT")
_GUTENBERG_END = re.compile(r"^\*\*\* ?END OF|^End of (the )?Project Gutenberg", re.IGNORECASE)


def gutenberg_body(lines: list[str]) -> list[str]:
    """Drop the licence header and footer; texts without markers come back whole."""
    starts = [i for i, line in enumerate(lines) if _GUTENBERG_START.match(line)]
    body = lines[starts[-1] + 1 :] if starts else lines
    ends = [i for i, line in enumerate(body) if _GUTENBERG_END.match(line)]
    return body[: ends[0]] if ends else body


def _trim(lines: list[str], first: str | None, last: str | None, doc_id: str) -> list[str]:
    """Apply a book's own cut points; a missing one means upstream changed, which must fail loudly."""
    try:
        start = lines.index(first) if first is not None else 0
        stop = lines.index(last, start) + 1 if last is not None else len(lines)
    except ValueError:
        raise CocaEvalError(f"embedded book {doc_id!r}: expected cut line not found in its source") from None
    return lines[start:stop]


def prose_lines(text: str) -> list[str]:
    """BOM, CR/CRLF, DOS end-of-file bytes, Gutenberg boilerplate and trailing spaces out; the prose stays."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").replace("\x1a", "")
    return gutenberg_body([line.rstrip() for line in text.split("\n")])


def normalise_text(raw: bytes, book: EmbeddedBook) -> str:
    """The book's prose (:func:`prose_lines`) between its own cut lines."""
    lines = _trim(prose_lines(raw.decode("utf-8")), book.first_line, book.last_line, book.doc_id)
    return "\n".join(lines).strip()


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_book_text(book: EmbeddedBook) -> str:
    """Cached normalised text of one book; built from the pinned archive on first use."""
    return cached_book_text(
        book.doc_id,
        book.text_sha256,
        lambda: normalise_text(read_member(fetch_pypi_file(book.archive), book.member), book),
    )


def cached_book_text(doc_id: str, text_sha256: str, build) -> str:
    """The cached text of book ``doc_id`` if it hashes to ``text_sha256``, else ``build()``'s, checked
    against that hash (a changed upstream or normaliser fails loudly) and cached."""
    path = cache_dir() / "books" / f"{doc_id}.txt"
    if path.is_file():
        text = path.read_bytes().decode("utf-8")
        if _sha256_text(text) == text_sha256:
            return text
    text = build()
    actual = _sha256_text(text)
    if actual != text_sha256:
        raise CocaEvalError(f"book {doc_id!r} normalises to sha256 {actual}, expected {text_sha256}")
    write_atomic(path, text)
    return text


def book_source(book: EmbeddedBook) -> dict:
    """Provenance recorded in run metadata, so a reported number can be traced to exact bytes."""
    return {
        "package": book.archive.package,
        "version": book.archive.version,
        "archive_sha256": book.archive.sha256,
        "member": book.member,
        "text_sha256": book.text_sha256,
        "license": book.license,
        "author": book.author,
        "year": book.year,
    }


def load_embedded_books() -> list[Document]:
    """All embedded books in a fixed order (alice, paradise-lost, as-you-like-it, botchan)."""
    return [
        Document(doc_id=b.doc_id, text=load_book_text(b), title=b.title, source=book_source(b))
        for b in EMBEDDED_BOOKS
    ]
