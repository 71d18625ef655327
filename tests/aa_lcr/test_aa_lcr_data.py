"""AA-LCR's questions read from a local copy in the published layout: the smoke set's folder as it
is, the same files as the hub's zip (``extracted_text/AA-LCR_extracted-text.zip``) with a file name
mangled as the hub's zip mangles apostrophes, and one line naming what is missing."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from coca_eval.aa_lcr.data import SMOKE_DIR, questions
from coca_eval.errors import CocaEvalError


def _zipped(tmp_path, rename=None):
    """The smoke set as the hub lays it out: the table and the zip of its ``lcr`` folder."""
    root = tmp_path / "aa"
    (root / "extracted_text").mkdir(parents=True)
    shutil.copy(SMOKE_DIR / "AA-LCR_Dataset.csv", root / "AA-LCR_Dataset.csv")
    with zipfile.ZipFile(root / "extracted_text" / "AA-LCR_extracted-text.zip", "w") as archive:
        for path in sorted((SMOKE_DIR / "lcr").rglob("*.txt")):
            name = path.relative_to(SMOKE_DIR).as_posix()
            archive.write(path, rename(name) if rename else name)
    return root


def test_a_zipped_copy_reads_as_the_folder(tmp_path):
    folder = questions(str(SMOKE_DIR))
    assert questions(str(_zipped(tmp_path))) == folder
    assert [q.question_id for q in folder] == ["1", "2", "3", "4", "5", "6"]
    assert all(len(q.documents) == 2 for q in folder)


def test_a_mangled_file_name_is_found_by_its_letters(tmp_path):
    mangled = _zipped(tmp_path, lambda name: name.replace("_2023_annual", "\u0393\u00c7\u00d6_2023_annual"))
    (first, *_) = questions(str(mangled))
    assert first.documents[0].startswith("Brightwater Ceramics Ltd - Annual Report 2023")


def test_a_missing_document_is_one_line_naming_it(tmp_path):
    root = _zipped(tmp_path, lambda name: name.replace("survey_2024", "survey_2025"))
    with pytest.raises(
        CocaEvalError, match="no document Survey/harbour_commute/harbour_commute_survey_2024.txt"
    ):
        questions(str(root))


def test_a_row_with_an_empty_field_is_named(tmp_path):
    root = _zipped(tmp_path)
    table = root / "AA-LCR_Dataset.csv"
    table.write_text(table.read_text().replace("2.2 million pounds", ""))
    with pytest.raises(CocaEvalError, match="row 2: empty answer"):
        questions(str(root))
