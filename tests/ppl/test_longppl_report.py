"""How reports read a LongPPL cell: a document bootstrap of the pooled key-token perplexity, and a cell
without key tokens shown as undefined, never as a number."""

from __future__ import annotations

import math

import numpy as np
import pytest
from longppl_runs import longppl_cell, longppl_run

from coca_eval.intervals import ppl_interval
from coca_eval.ppl.longppl.report import interval, protocol_line, units
from coca_eval.report.intervals import cell_interval, entry_text

KEY_NLL = np.array([1.1, 1.8, 1.4, 1.6, 1.2, 1.7])
KEYS = np.array([4, 9, 2, 6, 5, 3])


def test_the_interval_resamples_documents_with_their_key_token_sums():
    cell = longppl_cell(KEY_NLL, KEYS, other_nll=3.0)
    low, high = cell_interval(cell)
    assert (low, high) == ppl_interval(KEY_NLL * KEYS, KEYS)
    assert math.exp(1.1) < low < cell.value < high < math.exp(1.8)
    everything = [p["nll_sum"] for p in cell.detail["docs"]], [p["tokens"] for p in cell.detail["docs"]]
    assert high < ppl_interval(*everything)[0]  # the all-token perplexity is another number


def test_documents_without_key_tokens_stay_units_of_the_bootstrap():
    keys = KEYS.copy()
    keys[2] = 0
    cell = longppl_cell(KEY_NLL, keys)
    assert interval(cell) == ppl_interval(KEY_NLL * keys, keys)
    held = keys > 0
    assert interval(cell) != ppl_interval((KEY_NLL * keys)[held], keys[held])
    assert units(cell) == len(KEYS)  # n= counts the documents drawn, not the key tokens (cell.n)
    assert cell.n == keys.sum()


def test_no_interval_from_fewer_than_two_documents_with_key_tokens():
    keys = np.zeros_like(KEYS)
    keys[1] = 7
    cell = longppl_cell(KEY_NLL, keys)
    assert cell.status == "ok" and interval(cell) is None
    assert entry_text(cell, 2, intervals=True) == f"{cell.value:.2f}"


def test_a_cell_without_key_tokens_is_undefined_not_a_number():
    cell = longppl_cell(KEY_NLL, np.zeros_like(KEYS), length=16)
    assert cell.status == "error" and cell.value is None and cell_interval(cell) is None
    text = entry_text(cell, 2, intervals=True, show_n=True)
    assert text == "error" and not any(ch.isdigit() for ch in text)
    line = protocol_line(longppl_run([cell, longppl_cell(KEY_NLL, KEYS)]))
    assert line.endswith("No key token, so LongPPL undefined (error): m @ 16.")


@pytest.mark.parametrize(
    "params, source",
    [
        ({}, "judged by judge"),
        ({"evaluator_model": None, "key_tokens": "/runs/base.json"}, "from base.json"),
        ({"evaluator_model": None}, "judged by each evaluated model itself"),
    ],
)
def test_the_protocol_line_says_where_the_key_tokens_came_from(params, source):
    line = protocol_line(longppl_run([longppl_cell(KEY_NLL, KEYS)], **params))
    assert "6 documents x 128 tokens" in line and f"key tokens {source} (short 24" in line
    assert "undefined" not in line
