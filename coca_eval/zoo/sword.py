"""Plain text out of a SWORD ``zText`` Bible module (Debian ``sword-text-kjv``), without libsword.

The King James Version (1611, in its 1769 standard text) is the largest block of pre-1919
public-domain prose that Debian ships: more words than the zoo's other training books together. A
``zText`` module stores each testament as ``ot.bzz`` / ``nt.bzz``: independent zlib blocks (one per
biblical book here), each holding that book's OSIS XML as a sequence of verse fragments, located by
the block index ``ot.bzs`` / ``nt.bzs`` (little-endian uint32 triples: offset, compressed size,
uncompressed size). Reading every block in order yields the whole text. From the OSIS we keep the
words a reader sees: ``<note>`` (translators' footnotes) and ``<title>`` elements are dropped whole,
every other tag is removed but its text kept, and XML character entities (``&amp;c.``) are decoded.
SWORD commentaries (``zCom``) use the same container, one block per biblical book (``.bzs``/``.bzz``)
or per chapter (``.czs``/``.czz``).
"""

from __future__ import annotations

import html
import re
import struct
import zlib

from coca_eval.errors import CocaEvalError

_DROPPED = re.compile(r"<(note|title)\b[^>]*>.*?</\1>", re.DOTALL)
_SELF_CLOSED_DROPPED = re.compile(r"<(note|title)\b[^>]*/>")
_CHAPTER = re.compile(r"<chapter\b[^>]*sID=[^>]*>")
_TAG = re.compile(r"<[^>]+>")
_PILCROW = "\u00b6"
_INDEX_ENTRY = struct.Struct("<III")


def read_ztext_blocks(bzs: bytes, bzz: bytes) -> list[str]:
    """Each block of a ``.bzz`` file, located by its ``.bzs`` index and decoded as UTF-8."""
    if len(bzs) % _INDEX_ENTRY.size:
        raise CocaEvalError("SWORD zText block index has a partial entry")
    blocks = []
    for offset, size, expected in _INDEX_ENTRY.iter_unpack(bzs):
        try:
            payload = zlib.decompressobj().decompress(bzz[offset : offset + size])
        except zlib.error as exc:
            raise CocaEvalError(f"SWORD zText block at {offset} is damaged: {exc}") from None
        if len(payload) != expected:
            got = len(payload)
            raise CocaEvalError(f"SWORD zText block at {offset} holds {got} bytes, index says {expected}")
        blocks.append(payload.decode("utf-8"))
    return blocks


def osis_to_text(osis: str) -> str:
    """Reader's text of one OSIS fragment: one paragraph per chapter, words and punctuation only."""
    text = _DROPPED.sub(" ", osis)
    text = _SELF_CLOSED_DROPPED.sub(" ", text)
    text = _CHAPTER.sub("\n", text)
    text = html.unescape(_TAG.sub("", text)).replace(_PILCROW, " ")
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def ztext_book(bzs: bytes, bzz: bytes) -> str:
    """A whole testament as text, its biblical books separated by blank lines."""
    texts = (osis_to_text(block) for block in read_ztext_blocks(bzs, bzz))
    return "\n\n".join(t for t in texts if t)
