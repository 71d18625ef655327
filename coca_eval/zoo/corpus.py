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
  from outside the training distribution's books.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass

from coca_eval.archives import read_member
from coca_eval.assets import DebianFile, fetch_debian_file
from coca_eval.data.books import (
    EMBEDDED_BOOKS,
    book_source,
    cached_book_text,
    load_book_text,
    prose_lines,
)
from coca_eval.data.documents import Document
from coca_eval.errors import CocaEvalError
from coca_eval.zoo.rdata import read_rdb_strings
from coca_eval.zoo.sword import ztext_book

SPLITS = ("train", "heldout", "outside")

R_TOKENIZERS = DebianFile(
    "r-cran-tokenizers",
    "0.3.0-1",
    "r-cran-tokenizers_0.3.0-1_amd64.deb",
    "6312f013ebfde5650235bfd7ba5c44d9e4cf9f2da9855337c9483fe778f0d8c7",
)
R_JANEAUSTENR = DebianFile(
    "r-cran-janeaustenr",
    "1.0.0-1",
    "r-cran-janeaustenr_1.0.0-1_all.deb",
    "df6bddf211906d1ff404f8ff662c21b34e6660e7f54a311084e749050c019c95",
)
DICT_DEVIL = DebianFile(
    "dict-devil",
    "1.0-13.1",
    "dict-devil_1.0-13.1_all.deb",
    "6a535684def2a1f70cd42da16d12d43f0e9dc3e54e4a329178eebab3170e3154",
)
SWORD_KJV = DebianFile(
    "sword-text-kjv",
    "14.3-1",
    "sword-text-kjv_14.3-1_all.deb",
    "9f463f28ce665f6f528fc723179722bced880a4c5485f7a41bf742838315de57",
)
_RDB = "usr/lib/R/site-library/{}/data/Rdata.rdb"
_KJV = "usr/share/sword/modules/texts/ztext/engKJV2006eb/{}"


@dataclass(frozen=True)
class DebianBook:
    """A book inside a Debian package; ``extract`` turns the members' bytes (in order) into raw text."""

    doc_id: str
    title: str
    author: str
    year: str
    archive: DebianFile
    members: tuple[str, ...]
    extract: Callable[..., str]
    text_sha256: str


def _r_vector(index: int, joiner: str) -> Callable[[bytes], str]:
    """The ``index``-th character vector of an R lazy-load database, joined into one text."""
    return lambda rdb: joiner.join(read_rdb_strings(rdb)[index])


def _dict_text(dz: bytes) -> str:
    """A dictd database is gzip-compatible text; its ``00-database-*`` header entries are not prose."""
    lines = gzip.decompress(dz).decode("utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if "THE DEVIL'S DICTIONARY" in line)
    return "\n".join(lines[start:])


def _austen(doc_id: str, title: str, year: str, index: int, sha: str) -> DebianBook:
    member = _RDB.format("janeaustenr")
    extract = _r_vector(index, "\n")
    return DebianBook(doc_id, title, "Jane Austen", year, R_JANEAUSTENR, (member,), extract, sha)


def _testament(doc_id: str, title: str, part: str, sha: str) -> DebianBook:
    members = (_KJV.format(f"{part}.bzs"), _KJV.format(f"{part}.bzz"))
    return DebianBook(doc_id, title, "King James translators", "1769", SWORD_KJV, members, ztext_book, sha)


DEBIAN_BOOKS: dict[str, DebianBook] = {
    b.doc_id: b
    for b in (
        DebianBook(
            "moby-dick",
            "Moby Dick; or The Whale",
            "Herman Melville",
            "1851",
            R_TOKENIZERS,
            (_RDB.format("tokenizers"),),
            _r_vector(0, ""),
            "072790990fd15a7cc7e5c1c740fa8c883a92df225db8b769f1b25979d9f3716f",
        ),
        DebianBook(
            "devils-dictionary",
            "The Devil's Dictionary",
            "Ambrose Bierce",
            "1911",
            DICT_DEVIL,
            ("usr/share/dictd/devil.dict.dz",),
            _dict_text,
            "19fa7cea06bfef1c0132ec8528369479fddbf11200bf3fe1b89d90287a1740d2",
        ),
        _testament(
            "kjv-old-testament",
            "The Old Testament (King James Version)",
            "ot",
            "85a6ea360d6b27fe752e64a4acbcfd2ecf6c00f56ab6652d76fc9b6f9ae13e1a",
        ),
        _testament(
            "kjv-new-testament",
            "The New Testament (King James Version)",
            "nt",
            "d5ba52aff8a0aa77fbdf4dcfc961b567e6893b47f1e510d9c01134d16fa3db99",
        ),
        _austen(
            "emma", "Emma", "1815", 0, "dd08b340a56ad4a0a00718d5682528a5a5886ae0aef91c9e0fa528074fa64b75"
        ),
        _austen(
            "mansfield-park",
            "Mansfield Park",
            "1814",
            1,
            "e0e9ef3863ea77f51f6070062ee0dd50ad9b933223880617629e4e4963ea40ff",
        ),
        _austen(
            "northanger-abbey",
            "Northanger Abbey",
            "1817",
            2,
            "8618a5acf5be50cc6e9b7680c7469fb6012649ab08c709dfc63c6367989fd31d",
        ),
        _austen(
            "persuasion",
            "Persuasion",
            "1817",
            3,
            "726513a6c18bb678427bcbcf7c72d0d20816a67c25b0471b26ddcabf3ebac140",
        ),
        _austen(
            "pride-and-prejudice",
            "Pride and Prejudice",
            "1813",
            4,
            "2e44edaa4946d64ad541c68e0224f5d672f43bf3ce2a8a0b0637ad5e02fc6eb3",
        ),
        _austen(
            "sense-and-sensibility",
            "Sense and Sensibility",
            "1811",
            5,
            "0996d90842bbe8093f3b8142c1e77d1b20cff52d1d0615f3ed67733653e74e26",
        ),
    )
}

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
}


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
    if doc_id in DEBIAN_BOOKS:
        b = DEBIAN_BOOKS[doc_id]
        return Document(doc_id, debian_book_text(b), b.title, _debian_source(b))
    raise CocaEvalError(f"unknown zoo book {doc_id!r}")


def load_split(split: str) -> list[Document]:
    """All books of one split, in a fixed order."""
    if split not in SPLIT_BOOKS:
        raise CocaEvalError(f"unknown zoo split {split!r} (known: {', '.join(SPLITS)})")
    return [load_book(doc_id) for doc_id in SPLIT_BOOKS[split]]
