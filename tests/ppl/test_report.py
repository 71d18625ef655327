"""The perplexity protocol caption: a stride that reaches the window length is captioned disjoint."""

from __future__ import annotations

import pytest

from coca_eval.ppl.report import protocol_line, windows_caption
from coca_eval.results import Cell, Run

SLIDING = {"mode": "sliding", "stride": 512}


@pytest.mark.parametrize(
    ("lengths", "expected"),
    [
        ([1024, 2048], "sliding windows, stride 512"),
        ([512, 1024, 2048], "sliding windows, stride 512 (disjoint at L <= 512)"),
        ([256, 512], "disjoint windows (stride 512 >= L)"),
    ],
)
def test_sliding_is_said_only_where_the_stride_is_shorter_than_the_window(lengths, expected):
    assert windows_caption(SLIDING, lengths) == expected


def test_truncated_mode_names_no_stride():
    assert windows_caption({"mode": "truncated", "stride": 512}, [1024]) == (
        "truncated windows (the first L tokens of each document)"
    )


def test_protocol_line_reads_the_lengths_from_the_cells():
    cells = [
        Cell(task="ppl", method="m", metric="ppl", length=n, value=10.0, status="ok") for n in (256, 512)
    ]
    run = Run(config={"params": {**SLIDING, "dataset": "pg19", "doc_tokens": 4096, "bos": "auto", "seed": 0}},
              cells=cells)  # fmt: skip
    line = protocol_line(run)
    assert "disjoint windows (stride 512 >= L)" in line and "sliding" not in line
