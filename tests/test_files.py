"""Atomic writes: text and bytes land whole, and a rewrite leaves only the target behind."""

from __future__ import annotations

from coca_eval.files import write_atomic


def test_a_rewrite_leaves_only_the_target(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two" and [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_text_is_written_as_utf8(tmp_path):
    target = tmp_path / "book.txt"
    write_atomic(target, "Œuvres — ünïcode\n")
    assert target.read_bytes() == "Œuvres — ünïcode\n".encode()
