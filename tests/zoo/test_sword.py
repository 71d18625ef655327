"""The SWORD zText reader, on a module built in the test (two blocks of OSIS, as the KJV stores them)."""

from __future__ import annotations

import struct
import zlib

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.sword import osis_to_text, read_ztext_blocks, ztext_book

GENESIS = (
    '<div osisID="Gen" type="book"/><title type="main">The First Book of Moses</title>'
    '<chapter n="1" osisID="Gen.1" sID="Gen.1"/> In the <w lemma="strong:H7225">beginning</w> God '
    "created the heaven and the earth."
    '<note placement="foot"><reference>1.1 </reference>a translators\' note</note> '
    '<transChange type="added">was</transChange> light. <chapter eID="Gen.1"/>'
    '<chapter n="2" osisID="Gen.2" sID="Gen.2"/>\u00b6 Thus the heavens were finished.'
)
EXODUS = '<chapter n="1" osisID="Exod.1" sID="Exod.1"/>Now these are the names.'


def _module(blocks: list[str], junk: bytes = b"\0\0\0\0") -> tuple[bytes, bytes]:
    """A ``.bzs`` index and ``.bzz`` data; each block is followed by padding the index skips."""
    bzs, bzz = b"", b""
    for block in blocks:
        raw = block.encode("utf-8")
        packed = zlib.compress(raw) + junk
        bzs += struct.pack("<III", len(bzz), len(packed), len(raw))
        bzz += packed
    return bzs, bzz


def test_blocks_are_read_through_the_index_despite_padding():
    assert read_ztext_blocks(*_module([GENESIS, EXODUS])) == [GENESIS, EXODUS]


def test_osis_keeps_the_readers_words_only():
    text = osis_to_text(GENESIS)
    assert text == (
        "In the beginning God created the heaven and the earth. was light.\nThus the heavens were finished."
    )


def test_a_testament_joins_its_books_with_blank_lines():
    assert ztext_book(*_module([GENESIS, EXODUS])).endswith("finished.\n\nNow these are the names.")


def test_a_damaged_block_or_index_is_one_error():
    bzs, bzz = _module([GENESIS])
    with pytest.raises(CocaEvalError, match="damaged"):
        read_ztext_blocks(bzs, b"xx" + bzz[2:])
    with pytest.raises(CocaEvalError, match="partial entry"):
        read_ztext_blocks(bzs[:-1], bzz)
    wrong_size = struct.pack("<III", 0, len(bzz), 5)
    with pytest.raises(CocaEvalError, match="index says 5"):
        read_ztext_blocks(wrong_size, bzz)


def test_xml_entities_are_decoded_after_the_tags_are_gone():
    osis = "<p>wolves, foxes, &amp;c., and &lt;not a tag&gt; &quot;quoted&quot;</p>"
    assert osis_to_text(osis) == 'wolves, foxes, &c., and <not a tag> "quoted"'
