"""Every table the commands print, at 80 columns (a standard terminal, a piped log): no value, interval
bound, name one types or verdict is split over two lines or cut. Each table built from a frame is
checked word by word against that frame; the gate's own table against its verdicts and numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from coca_eval import tables
from coca_eval.cli import cli

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted((ROOT / "reports" / "zoo" / "runs").glob("*.json"))[:2]


@pytest.fixture
def frames(monkeypatch) -> list:
    """Every frame a command hands to the table renderer."""
    seen, made = [], tables.FittedTable.__init__

    def keep(self, frame, title, whole_labels=False):
        seen.append((frame, whole_labels))
        made(self, frame, title, whole_labels)

    monkeypatch.setattr(tables.FittedTable, "__init__", keep)
    return seen


def _printed_words(output: str) -> set[str]:
    return {w for line in output.splitlines() for w in re.split(r"[\s│┃]+", line) if w}


@pytest.mark.parametrize(
    "args",
    [["tasks"], ["tasks", "ruler"], ["tasks", "helmet"], ["models"], ["zoo", "list"]],
    ids=" ".join,
)
def test_listings_keep_every_word_whole(frames, args):
    result = CliRunner().invoke(cli, args, terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert frames and max(len(line) for line in result.output.splitlines()) <= 80
    _assert_whole(frames, result.output)


@pytest.mark.skipif(not RUNS, reason="no committed zoo runs")
def test_report_tables_keep_every_number_whole(frames, tmp_path):
    args = ["report", *map(str, RUNS), "--out", str(tmp_path / "r"), "--no-plots"]
    result = CliRunner().invoke(cli, args, terminal_width=80, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert frames and max(len(line) for line in result.output.splitlines()) <= 80
    _assert_whole(frames, result.output)


def _assert_whole(frames, output: str) -> None:
    printed = _printed_words(output)
    for frame, whole_labels in frames:
        values = [str(v) for column in frame.columns for v in frame[column]]
        labels = [str(v) for v in frame.index] if whole_labels else []
        for text in values + labels:
            for word in tables._plain(text).split():
                assert word in printed, f"{word!r} of {text!r} is split or cut at 80 columns"
