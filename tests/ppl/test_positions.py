"""Loss by position: bucket edges, buckets that add up to the document's sums, resume and old records."""

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError

from coca_eval.backends.hf import load_hf_backend
from coca_eval.journal import Journal
from coca_eval.methods import make_method
from coca_eval.ppl.params import make_params
from coca_eval.ppl.positions import (
    PositionBuckets,
    bucket_edges,
    bucket_end,
    is_edge,
    past,
    position_buckets,
    window_positions,
)
from coca_eval.ppl.records import DocPart
from coca_eval.ppl.task import PplTask
from coca_eval.ppl.windows import plan_windows
from coca_eval.progress import CellProgress
from coca_eval.runner import run_cells


def test_edges_are_powers_of_two_and_their_midpoints():
    assert bucket_edges(40) == [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    assert [p for p in range(100) if is_edge(p)] == [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96]
    assert [bucket_end(s) for s in (0, 3, 4, 6, 2048, 3072)] == [1, 4, 6, 8, 3072, 4096]


@pytest.mark.parametrize("mode,stride,policy", [("sliding", 16, "never"), ("sliding", 64, "first"),
                                                ("truncated", 64, "always")])  # fmt: skip
def test_every_scored_token_has_its_window_position(mode, stride, policy):
    plan = plan_windows(300, 64, stride, policy, mode)
    positions = window_positions(plan, 300)
    scored = positions >= 0
    assert scored.sum() == sum(w.n_scored for w in plan)
    assert positions[scored].max() <= 63
    # the document's first token is predicted from BOS (position 0) where a BOS leads, else by nothing
    assert positions[0] == (-1 if policy == "never" else 0) and positions[1] == (
        0 if policy == "never" else 1
    )
    for window in plan:  # within a window, consecutive tokens at consecutive positions
        assert np.all(np.diff(positions[window.score_from : window.score_to]) == 1)
    first = plan[0]
    assert positions[first.score_from] == first.first_logit  # the logit that predicts the token


def test_buckets_sum_to_the_values_and_sit_at_their_edges():
    rng = np.random.default_rng(0)
    positions = rng.integers(0, 5000, size=4000)
    values = rng.gamma(2.0, 1.5, size=4000)
    buckets = position_buckets(values, positions)
    assert sum(buckets.tokens) == 4000 and buckets.agrees_with(float(values.sum()), 4000)
    for start, nll, tokens in zip(buckets.starts, buckets.nll, buckets.tokens, strict=True):
        inside = (positions >= start) & (positions < bucket_end(start))
        assert tokens == inside.sum() and nll == pytest.approx(values[inside].sum(), rel=1e-12)
    nll, tokens = past(buckets, 2048)
    assert tokens == (positions >= 2048).sum() and nll == pytest.approx(values[positions >= 2048].sum())


def test_a_record_whose_buckets_do_not_add_up_is_refused():
    buckets = {"starts": [0, 1], "nll": [1.0, 2.0], "tokens": [1, 2]}
    assert DocPart.model_validate({"doc_id": "a", "nll_sum": 3.0, "tokens": 3, "positions": buckets})
    for changed in ({"nll_sum": 3.5}, {"tokens": 4}, {"nll_sum": None}):
        with pytest.raises(ValidationError, match="do not add up"):
            DocPart.model_validate(
                {"doc_id": "a", "nll_sum": 3.0, "tokens": 3, "positions": buckets, **changed}
            )
    with pytest.raises(ValidationError, match="not a bucket edge"):
        PositionBuckets(starts=[0, 5], nll=[1.0, 2.0], tokens=[1, 2])
    old = DocPart.model_validate({"doc_id": "a", "nll_sum": 3.0, "tokens": 3})  # earlier versions
    assert old.positions is None


def _cells(tmp_path, corpus_file, model_dir, journal="j.jsonl", **params):
    values = dict(dataset=str(corpus_file), num_docs=3, doc_tokens=200, lengths="32,64", stride=16)
    values.update(params)
    ppl_params = make_params(values)
    method = make_method(str(model_dir), "none", "m", "float32", "hf")
    with Journal(tmp_path / journal) as journal, CellProgress(2) as progress:
        task = PplTask(ppl_params, journal, progress)
        return run_cells(
            task, [method], ppl_params.lengths, journal, load_hf_backend, lambda m: "w", progress
        )


@pytest.mark.parametrize("mode", ["sliding", "truncated"])
def test_buckets_add_up_to_the_cell(tmp_path, tiny_llama_dir, corpus_file, mode):
    cells = _cells(tmp_path, corpus_file, tiny_llama_dir, mode=mode)
    for cell in cells:
        parts = [DocPart.model_validate(d) for d in cell.detail["docs"]]
        assert all(p.positions is not None for p in parts)
        assert sum(sum(p.positions.tokens) for p in parts) == cell.n  # exact
        nll = math.fsum(p.positions.total_nll for p in parts)
        assert math.exp(nll / cell.n) == pytest.approx(cell.value, rel=1e-12)
        for part in parts:
            assert part.positions.agrees_with(part.nll_sum, part.tokens)
            assert part.positions.starts[-1] < cell.length  # a position inside the window
    if mode == "truncated":  # one window from the document start: every position once per document
        (first, *_) = [DocPart.model_validate(d) for d in cells[1].detail["docs"]]
        assert sum(first.positions.tokens) == 63 and first.positions.starts == bucket_edges(62)[:-1]


def test_resumed_run_keeps_the_buckets_of_the_uninterrupted_one(tmp_path, tiny_llama_dir, corpus_file):
    whole = _cells(tmp_path, corpus_file, tiny_llama_dir, journal="whole.jsonl", stride=32)
    lines = (tmp_path / "whole.jsonl").read_text().splitlines()
    parts = [line for line in lines if json.loads(line)["kind"] == "part"]
    (tmp_path / "cut.jsonl").write_text("\n".join(parts[:4]) + "\n")  # stopped inside the second cell
    resumed = _cells(tmp_path, corpus_file, tiny_llama_dir, journal="cut.jsonl", stride=32)
    assert [c.model_dump() for c in resumed] == [c.model_dump() for c in whole]
    assert all("positions" in d for c in resumed for d in c.detail["docs"])
