"""The R lazy-load reader and the .deb member reader, on archives built in the test."""

from __future__ import annotations

import io
import struct
import tarfile
import zlib

import pytest

from coca_eval.archives import read_member
from coca_eval.errors import CocaEvalError
from coca_eval.zoo.rdata import read_rdb_strings


def _serialise_strings(strings: list[str | None], version: int = 3) -> bytes:
    """R's XDR serialisation of one character vector (NA for None)."""
    out = b"X\n" + struct.pack(">iii", version, 0x040200, 0x030500)
    if version == 3:
        out += struct.pack(">i", 5) + b"UTF-8"
    out += struct.pack(">ii", 16, len(strings))
    for s in strings:
        raw = None if s is None else s.encode("utf-8")
        out += struct.pack(">ii", 9 | (1 << 15), -1 if raw is None else len(raw)) + (raw or b"")
    return out


def _rdb(*payloads: bytes) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + zlib.compress(p) for p in payloads)


def test_reads_every_character_vector_in_order():
    other = b"X\n" + struct.pack(">iii", 2, 0, 0) + struct.pack(">ii", 14, 0)  # a REALSXP: skipped
    rdb = _rdb(
        _serialise_strings(["EMMA", "", "By Jane Austen"]), other, _serialise_strings(["Moby", None], 2)
    )
    assert read_rdb_strings(rdb) == [["EMMA", "", "By Jane Austen"], ["Moby", ""]]


def test_a_truncated_database_is_an_error():
    rdb = _rdb(_serialise_strings(["one"]))
    with pytest.raises(CocaEvalError, match="truncated"):
        read_rdb_strings(rdb[:-3])


def _deb(members: dict[str, bytes]) -> bytes:
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w:xz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(f"./{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    out = b"!<arch>\n"
    for name, data in (
        ("debian-binary", b"2.0\n"),
        ("control.tar.xz", b"x"),
        ("data.tar.xz", tar.getvalue()),
    ):
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data
        out += b"\n" if len(data) % 2 else b""
    return out


def test_reads_one_member_of_a_deb(tmp_path):
    deb = tmp_path / "pkg_1.0_all.deb"
    deb.write_bytes(_deb({"usr/share/x/a.txt": b"alpha", "usr/share/x/b.txt": b"beta"}))
    assert read_member(deb, "usr/share/x/b.txt") == b"beta"
    with pytest.raises(CocaEvalError, match="not found"):
        read_member(deb, "usr/share/x/missing.txt")
