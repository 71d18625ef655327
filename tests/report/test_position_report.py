"""The loss-by-position figure: drawn for runs whose documents have buckets, absent for older runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coca_eval.ppl.position_plot import position_curve
from coca_eval.ppl.positions import position_buckets
from coca_eval.ppl.records import DocPart
from coca_eval.report import ReportDefinition, build_report
from coca_eval.results import Cell, Run, load_run, save_run

LENGTH, TRAINED = 4096, 1024


def doc_part(doc: int, rise: float, rng) -> DocPart:
    """A document whose loss is about 3 nats and ``rise`` more past the trained context."""
    positions = np.arange(LENGTH - 1)
    values = rng.gamma(4.0, 0.75, size=positions.size) + rise * (positions >= TRAINED)
    return DocPart(doc_id=f"doc{doc}", nll_sum=float(values.sum()), tokens=int(values.size),
                   positions=position_buckets(values, positions))  # fmt: skip


def truncated_cell(method: str, rise: float, seed: int, buckets: bool = True) -> Cell:
    rng = np.random.default_rng(seed)
    parts = [doc_part(d, rise, rng) for d in range(6)]
    docs = [p.model_dump(exclude=set() if buckets else {"positions"}) for p in parts]
    nll, tokens = sum(p.nll_sum for p in parts), sum(p.tokens for p in parts)
    detail = {"docs": docs, "mode": "truncated"}
    return Cell(task="ppl", method=method, metric="ppl", length=LENGTH, dataset="pg19",
                value=math.exp(nll / tokens), n=tokens, detail=detail)  # fmt: skip


def save_truncated_run(path, buckets: bool = True):
    cells = [truncated_cell("RoPE", 2.0, 1, buckets), truncated_cell("CoCA", 0.0, 2, buckets)]
    methods = [{"label": m, "trained_context": TRAINED} for m in ("RoPE", "CoCA")]
    save_run(
        Run(config={"task": "ppl", "params": {"mode": "truncated"}, "methods": methods}, cells=cells), path
    )
    return path


def test_the_curve_climbs_past_the_trained_context_inside_its_band(tmp_path):
    run = load_run(save_truncated_run(tmp_path / "r.json"))
    rope, coca = (position_curve(cell) for cell in run.cells)
    assert rope.starts[-1] == 3072 and len(rope.starts) == len(rope.mean) == len(rope.low)
    assert np.all(rope.low <= rope.mean) and np.all(rope.mean <= rope.high)
    past = rope.starts >= TRAINED
    assert rope.mean[past].min() > rope.mean[~past].max() + 1.0  # the 2-nat rise past 1k
    assert abs(coca.mean[past].mean() - coca.mean[~past][-4:].mean()) < 0.3
    whole = run.cells[0]  # the buckets' micro-average over everything is the cell's perplexity
    nll = sum(d["positions"]["nll"][i] for d in whole.detail["docs"] for i in range(len(rope.starts)))
    assert math.exp(nll / whole.n) == pytest.approx(whole.value, rel=1e-12)


def test_report_draws_loss_by_position_with_the_trained_context(tmp_path):
    output = build_report(
        [save_truncated_run(tmp_path / "r.json")], ReportDefinition(), ["md"], tmp_path / "out"
    )
    names = [name for name, _ in output.plots]
    assert names == ["loss_vs_position_4096"]  # one length: no perplexity-vs-length curve
    png = tmp_path / "out" / "plots" / "loss_vs_position_4096.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    svg = (tmp_path / "out" / "plots" / "loss_vs_position_4096.svg").read_text()
    assert "trained context (1k)" in svg
    md = (tmp_path / "out" / "report.md").read_text()
    assert "(plots/loss_vs_position_4096.png)" in md and "truncated windows" in md


def test_a_run_without_buckets_loads_and_reports_without_the_figure(tmp_path):
    path = save_truncated_run(tmp_path / "old.json", buckets=False)
    run = load_run(path)
    assert all("positions" not in d for c in run.cells for d in c.detail["docs"])
    assert position_curve(run.cells[0]) is None
    output = build_report([path], ReportDefinition(), ["md"], tmp_path / "out")
    assert [name for name, _ in output.plots] == []  # one length, no buckets: nothing to draw


def test_a_bucket_is_drawn_at_the_geometric_middle_of_its_contexts():
    """A prediction at position q had q + 1 tokens of context: the bucket of positions 0 (a 1-token
    context) is drawn at sqrt(1 x its end), the one from 1024 at sqrt(1025 x its end)."""
    from coca_eval.ppl.position_plot import PositionCurve
    from coca_eval.ppl.positions import bucket_end

    curve = PositionCurve(np.array([0, 1024]), np.zeros(2), None, None)
    expected = [math.sqrt(1 * bucket_end(0)), math.sqrt(1025 * bucket_end(1024))]
    assert curve.contexts == pytest.approx(expected)
