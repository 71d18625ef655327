"""AA-LCR's questions and documents, read and checked before any model loads.

The published layout (``ArtificialAnalysis/AA-LCR`` on the hub): ``AA-LCR_Dataset.csv``, one row per
question with ``document_category``, ``document_set_id``, ``question_id``, ``question``, ``answer``,
``data_source_filenames`` (the question's documents, ``;``-separated, in prompt order) and
``input_tokens``; and ``extracted_text/AA-LCR_extracted-text.zip``, whose ``lcr/<category>/<set id>/``
folders hold each document as text. ``--data`` takes ``hub`` (both files downloaded through
``huggingface_hub``; untested, since the tests run offline), ``smoke`` (the set shipped beside
this module, invented for offline runs: its numbers mean nothing), or a folder of that layout with the
zip or its ``lcr`` folder extracted.
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError

HUB_ID = "ArtificialAnalysis/AA-LCR"
CSV_NAME = "AA-LCR_Dataset.csv"
ZIP_NAME = "extracted_text/AA-LCR_extracted-text.zip"
SMOKE_DIR = Path(__file__).with_name("smoke")
FIELDS = (
    "document_category",
    "document_set_id",
    "question_id",
    "question",
    "answer",
    "data_source_filenames",
)


@dataclass(frozen=True)
class Question:
    """One question: its id, category, document set, text, official answer and documents (in order)."""

    question_id: str
    category: str
    document_set: str
    question: str
    answer: str
    filenames: tuple[str, ...]
    documents: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"question {self.question_id}"


def _hub_folder() -> _Folder:
    """The hub's two files, downloaded (or found in the hub cache) and laid out as a local folder."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise CocaEvalError("--data hub needs huggingface_hub: pip install huggingface_hub") from None
    try:
        table = Path(hf_hub_download(HUB_ID, CSV_NAME, repo_type="dataset"))
        archive = Path(hf_hub_download(HUB_ID, ZIP_NAME, repo_type="dataset"))
    except Exception as exc:  # noqa: BLE001 - any failure of the hub is one line
        raise CocaEvalError(f"--data hub: cannot download {HUB_ID}: {str(exc).splitlines()[0]}") from None
    return _Folder(table, archive)


def name_key(name: str) -> str:
    """A file name's ASCII letters and digits: the hub's zip stores some names with their apostrophes
    and dashes mangled into other characters, which this key ignores."""
    return "".join(c for c in name if c.isascii() and c.isalnum()).lower()


class _Folder:
    """The question table and where its documents are: an ``lcr`` folder, or the zip holding one. A
    document is found by its name, else by its :func:`name_key` among its set's files."""

    def __init__(self, table: Path, documents: Path) -> None:
        self.table, self.documents = table, documents

    def _names(self) -> list[str]:
        """Every document's path below ``lcr/``."""
        if self.documents.is_dir():
            return [
                p.relative_to(self.documents).as_posix() for p in self.documents.rglob("*") if p.is_file()
            ]
        with zipfile.ZipFile(self.documents) as archive:
            return [n.removeprefix("lcr/") for n in archive.namelist() if not n.endswith("/")]

    def _found(self, relative: str) -> str:
        folder, _, name = relative.rpartition("/")
        keyed = [n for n in self._names() if n.rpartition("/")[0] == folder]
        matches = [n for n in keyed if name_key(n.rpartition("/")[2]) == name_key(name)]
        if len(matches) != 1:
            why = "no document" if not matches else "several documents match"
            raise CocaEvalError(f"{self.documents}: {why} {relative}")
        return matches[0]

    def read(self, relative: str) -> str:
        if self.documents.is_dir():
            path = self.documents / relative
            if not path.is_file():
                path = self.documents / self._found(relative)
            return path.read_text(encoding="utf-8")
        with zipfile.ZipFile(self.documents) as archive:
            names = set(archive.namelist())
            member = f"lcr/{relative}" if f"lcr/{relative}" in names else f"lcr/{self._found(relative)}"
            return archive.read(member).decode("utf-8")


def _local_folder(data: str) -> _Folder:
    root = Path(data).expanduser()
    table = root / CSV_NAME
    if not table.is_file():
        raise CocaEvalError(f"--data {data}: no {CSV_NAME} (AA-LCR's published layout)")
    for documents in (
        root / "lcr",
        root / "extracted_text" / "lcr",
        root / ZIP_NAME,
        root / Path(ZIP_NAME).name,
    ):
        if documents.exists():
            return _Folder(table, documents)
    raise CocaEvalError(f"--data {data}: no lcr folder and no {Path(ZIP_NAME).name} beside {CSV_NAME}")


def folder_of(data: str) -> _Folder:
    if data == "hub":
        return _hub_folder()
    return _local_folder(str(SMOKE_DIR) if data == "smoke" else data)


def _rows(table: Path) -> list[dict]:
    text = table.read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    missing = [f for f in FIELDS if rows and f not in rows[0]]
    if not rows or missing:
        raise CocaEvalError(f"{table}: {'no rows' if not rows else 'no column ' + missing[0]}")
    return rows


def _question(folder: _Folder, row: dict, number: int) -> Question:
    where = f"{folder.table} row {number}"
    if not all((row.get(f) or "").strip() for f in FIELDS):
        empty = next(f for f in FIELDS if not (row.get(f) or "").strip())
        raise CocaEvalError(f"{where}: empty {empty}")
    names = tuple(n.strip() for n in row["data_source_filenames"].split(";") if n.strip())
    folder_name = f"{row['document_category'].strip()}/{row['document_set_id'].strip()}"
    documents = tuple(folder.read(f"{folder_name}/{name}") for name in names)
    return Question(
        row["question_id"].strip(), row["document_category"].strip(), row["document_set_id"].strip(),
        row["question"].strip(), row["answer"].strip(), names, documents,
    )  # fmt: skip


@cache
def questions(data: str) -> tuple[Question, ...]:
    """Every question of ``data`` with its documents read, in the table's order; a missing column,
    empty field or missing document is one line naming it."""
    folder = folder_of(data)
    found = tuple(_question(folder, row, n) for n, row in enumerate(_rows(folder.table), start=2))
    ids = [q.question_id for q in found]
    if len(set(ids)) != len(ids):
        raise CocaEvalError(f"{folder.table}: question ids repeat")
    return found


def data_files(data: str) -> list[Path]:
    """The local files a run reads (named by content in the run's identity)."""
    folder = folder_of(str(SMOKE_DIR) if data == "smoke" else data)
    if folder.documents.is_dir():
        return [folder.table, *sorted(p for p in folder.documents.rglob("*") if p.is_file())]
    return [folder.table, folder.documents]
