"""A file the user hands in that is not UTF-8 (saved as Latin-1, a stray binary byte) is one line naming
the file, exit 2: BABILong's prepared rows under ``babilong --data``, RULER's predictions and summary
under ``import ruler``, lm-eval's samples file under ``import lm-eval``. Each used to end in Python's
``UnicodeDecodeError`` traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from tests.ruler.conftest import scripted  # noqa: F401  (the babilong case's backend)

DATA = Path(__file__).resolve().parent.parent
LATIN_1 = "Où est Marie?".encode("latin-1")  # 0xf9 where UTF-8 wants a continuation: not UTF-8


def _spoil(path: Path) -> int:
    """Append a Latin-1 line to ``path``; the offset of its first byte UTF-8 cannot decode."""
    before = path.read_bytes()
    path.write_bytes(before + LATIN_1 + b"\n")
    return len(before) + 1  # "O" decodes, "\xf9" does not


def test_babilong_data_not_utf8_is_one_line(tmp_path, capsys, scripted):  # noqa: F811
    shutil.copytree(DATA / "babilong" / "data" / "prepared", tmp_path / "prepared")
    spoiled = tmp_path / "prepared" / "1k" / "qa1.jsonl"
    offset = _spoil(spoiled)
    result = invoke(
        capsys, "babilong", "--model", "zoo-rope", "--backend", "scripted", "--tasks", "qa1",
        "--lengths", "1k", "--samples", "2", "--source", "babilong", "--data", tmp_path / "prepared",
        "--output", tmp_path / "out.json",
    )  # fmt: skip
    assert_one_line_error(result, 2, f"{spoiled} is not UTF-8", f"byte {offset} is 0xf9")
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("name", ["vt.jsonl", "summary.csv"])
def test_import_ruler_of_a_file_not_utf8_is_one_line(tmp_path, capsys, name):
    shutil.copytree(DATA / "imported" / "data" / "ruler", tmp_path / "ruler")
    pred = tmp_path / "ruler" / "1024" / "pred"
    offset = _spoil(pred / name)
    result = invoke(capsys, "import", "ruler", pred, "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, f"{pred / name} is not UTF-8", f"byte {offset} is 0xf9")
    assert not (tmp_path / "out.json").exists()


def test_import_lm_eval_of_a_samples_file_not_utf8_is_one_line(tmp_path, capsys):
    shutil.copytree(DATA / "imported" / "data" / "lm_eval_ruler", tmp_path / "lm")
    (samples,) = (tmp_path / "lm").rglob("samples_ruler_vt_*.jsonl")
    offset = _spoil(samples)
    result = invoke(capsys, "import", "lm-eval", tmp_path / "lm", "--output", tmp_path / "out.json")
    assert_one_line_error(result, 2, f"{samples} is not UTF-8", f"byte {offset} is 0xf9")
    assert not (tmp_path / "out.json").exists()
