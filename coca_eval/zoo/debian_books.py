"""The zoo's books that Debian packages ship, each pinned by its package's sha256 and its text's.

R data (Moby Dick in ``r-cran-tokenizers``, Jane Austen's novels in ``r-cran-janeaustenr``, read by
:mod:`coca_eval.zoo.rdata`), a dictd database (The Devil's Dictionary), and SWORD modules read without
libsword (:mod:`coca_eval.zoo.sword`): the King James Bible, and three commentaries that are the
``train-extra`` books: Spurgeon's Treasury of David (1869-1885), Matthew Henry's Concise Commentary
(1706) and the Scofield Reference Notes (1917 edition), all public domain by their packages'
copyright files.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass

from coca_eval.assets import DebianFile
from coca_eval.zoo.rdata import read_rdb_strings
from coca_eval.zoo.sword import ztext_book

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
SWORD_MHCC = DebianFile(
    "sword-comm-mhcc",
    "2.0-1",
    "sword-comm-mhcc_2.0-1_all.deb",
    "06f748215de78ff48fdfdee93e3ffc5af6318b976485f7aedf22309236967e35",
)
SWORD_SCOFIELD = DebianFile(
    "sword-comm-scofield",
    "2.1-1",
    "sword-comm-scofield_2.1-1_all.deb",
    "0c11a9533d4870ec40cc72792ecde8aae6e4cc00eca12301150aac018fd5dfcb",
)
SWORD_TDAVID = DebianFile(
    "sword-comm-tdavid",
    "2.1-1",
    "sword-comm-tdavid_2.1-1_all.deb",
    "bcbfad701c5c4a061475b58309cebc42755a59e87478c8355227c5e046412b3f",
)
_RDB = "usr/lib/R/site-library/{}/data/Rdata.rdb"
_KJV = "usr/share/sword/modules/texts/ztext/engKJV2006eb"
_COMMENTARY = "usr/share/sword/modules/comments/zcom/{}"


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


def _sword(
    doc_id: str, title: str, author: str, year: str, archive: DebianFile, module: str, stem: str, sha: str
):
    """A SWORD module's block pair in directory ``module``: index ``STEMs`` and data ``STEMz`` (``ot.bz``:
    ``ot.bzs`` and ``ot.bzz``), read by :func:`ztext_book` (zText and zCom share the container)."""
    members = (f"{module}/{stem}s", f"{module}/{stem}z")
    return DebianBook(doc_id, title, author, year, archive, members, ztext_book, sha)


def _testament(doc_id: str, title: str, part: str, sha: str) -> DebianBook:
    return _sword(doc_id, title, "King James translators", "1769", SWORD_KJV, _KJV, f"{part}.bz", sha)


def _commentary(doc_id: str, title: str, author: str, year: str, archive: DebianFile, files: str, sha: str):
    """One testament of a SWORD commentary; ``files`` is ``MODULE/STEM`` (``mhcc/ot.bz``)."""
    module, stem = files.split("/")
    return _sword(doc_id, title, author, year, archive, _COMMENTARY.format(module), stem, sha)


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
        _commentary(
            "treasury-of-david",
            "The Treasury of David",
            "C. H. Spurgeon",
            "1885",
            SWORD_TDAVID,
            "tdavid/ot.cz",
            "cca0f9cdab6f9077e0ecd2e6bf5992e4b4ab9775231fd655fbbb7249fc10b818",
        ),
        _commentary(
            "mhcc-old-testament",
            "Concise Commentary on the Whole Bible: the Old Testament",
            "Matthew Henry",
            "1706",
            SWORD_MHCC,
            "mhcc/ot.bz",
            "7cf3bf071eea96cb6cc8b580771f215fb321923057e888b3b45fba6854f4d35f",
        ),
        _commentary(
            "mhcc-new-testament",
            "Concise Commentary on the Whole Bible: the New Testament",
            "Matthew Henry",
            "1706",
            SWORD_MHCC,
            "mhcc/nt.bz",
            "9504824892b66746d88fc70e00351b2394fb161b9734eb18ccd4d7f5cedd2709",
        ),
        _commentary(
            "scofield-old-testament",
            "Scofield Reference Notes (1917 edition): the Old Testament",
            "C. I. Scofield",
            "1917",
            SWORD_SCOFIELD,
            "scofield/ot.bz",
            "e6b010b41f6d5962b7bc729cdacd527cf96fe3262b9be146b85e5f9e2ff1a04b",
        ),
        _commentary(
            "scofield-new-testament",
            "Scofield Reference Notes (1917 edition): the New Testament",
            "C. I. Scofield",
            "1917",
            SWORD_SCOFIELD,
            "scofield/nt.bz",
            "e5c1d2276621b977c5d4519356d7d7c9c2479fdb6d93ce97312fc63855d082d6",
        ),
    )
}
