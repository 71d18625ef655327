"""Typed per-document records and the tokenizer-independent views (bits per byte, word perplexity)."""

from __future__ import annotations

import math

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.ppl.records import LN2, DocPart, bits_per_byte, parts_of, word_perplexity
from coca_eval.report import ReportDefinition, build_report
from coca_eval.results import Cell, Run, save_run


def ppl_cell(method: str, length: int, parts: list[DocPart]) -> Cell:
    nll, tokens = sum(p.nll_sum for p in parts), sum(p.tokens for p in parts)
    detail = {"docs": [p.model_dump() for p in parts]}
    return Cell(task="ppl", method=method, metric="ppl", length=length, dataset="books",
                value=math.exp(nll / tokens), n=tokens, detail=detail)  # fmt: skip


def test_bits_per_byte_and_word_perplexity_come_from_the_same_sums():
    parts = [DocPart(doc_id="a", nll_sum=100 * LN2, tokens=50, bytes=80, words=20),
             DocPart(doc_id="b", nll_sum=60 * LN2, tokens=30, bytes=80, words=20)]  # fmt: skip
    assert bits_per_byte(parts) == pytest.approx(1.0)
    assert word_perplexity(parts) == pytest.approx(math.exp(160 * LN2 / 40))
    old = [DocPart(doc_id="a", nll_sum=1.0, tokens=5)]  # a coca-eval/1 record
    assert bits_per_byte(old) is None and word_perplexity(old) is None
    assert parts_of({"docs": [{"doc_id": "a", "nll_sum": None, "tokens": 3}]})[0].nll_sum is None


def test_report_metric_bpb_compares_tokenizers_in_one_table(tmp_path):
    small = [DocPart(doc_id="a", nll_sum=200 * LN2, tokens=100, bytes=400, words=80)]
    large = [DocPart(doc_id="a", nll_sum=300 * LN2, tokens=200, bytes=400, words=80)]
    old = [DocPart(doc_id="a", nll_sum=100.0, tokens=100)]
    cells = [
        ppl_cell("small vocab", 512, small),
        ppl_cell("large vocab", 512, large),
        ppl_cell("old", 512, old),
    ]
    save_run(Run(config={"task": "ppl", "params": {}}, cells=cells), tmp_path / "r.json")
    output = build_report(
        [tmp_path / "r.json"], ReportDefinition(metric="bpb", plots=False), [], tmp_path / "o"
    )
    (table,) = output.tables
    assert "bpb" in table.title
    shown = {row.label: row.entries[0] for row in table.rows}
    assert shown["small vocab"].text == "0.50" and shown["large vocab"].text == "0.75"
    assert shown["small vocab"].bold and shown["old"].text == "error"


def test_report_metric_nobody_offers_is_one_line_error(tmp_path):
    cells = [ppl_cell("m", 512, [DocPart(doc_id="a", nll_sum=1.0, tokens=5)])]
    save_run(Run(config={"task": "ppl"}, cells=cells), tmp_path / "r.json")
    with pytest.raises(CocaEvalError, match="--metric accuracy"):
        build_report([tmp_path / "r.json"], ReportDefinition(metric="accuracy"), [], tmp_path / "o")
