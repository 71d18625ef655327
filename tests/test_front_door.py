"""The limits the project holds itself to as families land: a README a reader finishes (200 lines),
committed reports a clone fetches quickly (5 MB), and modules small enough to read whole (350 lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LINES, REPORTS_BYTES, MODULE_LINES = 200, 5_000_000, 350


@pytest.mark.committed_data
def test_the_readme_stays_within_its_lines():
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_LINES, f"README.md has {lines} lines (at most {README_LINES})"


@pytest.mark.committed_data
def test_the_committed_reports_stay_within_their_size():
    size = sum(p.stat().st_size for p in (ROOT / "reports").rglob("*") if p.is_file())
    assert size <= REPORTS_BYTES, f"reports/ holds {size:,} bytes (at most {REPORTS_BYTES:,})"


def test_no_module_is_too_long_to_read_whole():
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / "coca_eval").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert not long, f"modules over {MODULE_LINES} lines: {long}"
