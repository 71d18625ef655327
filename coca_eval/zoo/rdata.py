"""Character vectors out of an R package's lazy-load database (``data/Rdata.rdb``), without R.

Two Debian R packages carry real pre-1919 books as R data: janeaustenr (the six novels, one line of
text per element) and tokenizers (Moby Dick as one string). An ``.rdb`` file is a run of objects, each
a 4-byte big-endian length followed by a zlib stream of R's XDR serialisation. The zoo needs only the
character vector at the top of each object, so this reads exactly that and ignores attributes.
"""

from __future__ import annotations

import struct
import zlib

from coca_eval.errors import CocaEvalError

_STRSXP, _CHARSXP = 16, 9
_NA_LENGTH = -1


def read_rdb_strings(rdb: bytes) -> list[list[str]]:
    """Every top-level character vector in the database, in file order."""
    vectors, rest = [], rdb
    while len(rest) > 4:
        stream = zlib.decompressobj()
        payload = stream.decompress(rest[4:])
        if not stream.eof:
            raise CocaEvalError("truncated R lazy-load database")
        vectors.append(_read_strsxp(payload))
        rest = stream.unused_data
    return [v for v in vectors if v is not None]


class _Reader:
    """Big-endian cursor over one serialised object."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def int(self) -> int:
        (value,) = struct.unpack_from(">i", self.data, self.at)
        self.at += 4
        return value

    def bytes(self, n: int) -> bytes:
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk


def _read_strsxp(payload: bytes) -> list[str] | None:
    """The leading character vector of one serialised object (None when it is something else)."""
    if not payload.startswith(b"X\n"):
        raise CocaEvalError("R object is not in XDR serialisation")
    r = _Reader(payload[2:])
    version = r.int()
    r.int(), r.int()  # writer's and minimum reader's R versions
    if version == 3:
        r.bytes(r.int())  # native encoding name
    if r.int() & 0xFF != _STRSXP:
        return None
    return [_read_charsxp(r) for _ in range(r.int())]


def _read_charsxp(r: _Reader) -> str:
    flags = r.int()
    if flags & 0xFF != _CHARSXP:
        raise CocaEvalError(f"unexpected R type {flags & 0xFF} inside a character vector")
    n = r.int()
    return "" if n == _NA_LENGTH else r.bytes(n).decode("utf-8", errors="replace")
