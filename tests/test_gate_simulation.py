"""The gate's statistics on simulated run pairs: false alarms at most alpha, planted regressions caught.

Each simulated pair is two runs of "the same model" whose per-document NLL and per-sample correctness
carry independent noise; regressions are planted on top (5 % PPL on every document, 20 points of passkey
accuracy).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from coca_eval.gate import GateOptions, run_gate
from coca_eval.results import Cell, Run

LENGTHS = (512, 1024, 2048)
PPL_PARAMS = {"dataset": "pg19", "num_docs": 20, "doc_tokens": 4096, "stride": 512, "seed": 0}
PASSKEY_PARAMS = {"samples": 100, "seed": 0, "template": "landmark"}


def ppl_run(
    nll_per_token: np.ndarray, tokens: np.ndarray, method: str = "m", params: dict | None = None
) -> Run:
    """A ppl run: one cell per length from a [lengths, docs] array of per-token NLL."""
    cells = []
    for length, row in zip(LENGTHS, nll_per_token, strict=False):
        docs = [
            {"doc_id": f"d{i}", "nll_sum": float(x * t), "tokens": int(t)}
            for i, (x, t) in enumerate(zip(row, tokens, strict=True))
        ]
        value = math.exp(sum(d["nll_sum"] for d in docs) / sum(d["tokens"] for d in docs))
        cells.append(
            Cell(task="ppl", method=method, metric="ppl", length=length, dataset="pg19", value=value,
                 n=int(tokens.sum()), detail={"docs": docs, "stride": 512})
        )  # fmt: skip
    return Run(config={"task": "ppl", "params": params or PPL_PARAMS}, cells=cells)


def passkey_run(correct: np.ndarray, method: str = "m", params: dict | None = None) -> Run:
    """A passkey run from a [lengths, samples] boolean array, accuracy in points; keys and depths depend
    only on the index."""
    cells = []
    for length, row in zip(LENGTHS, correct, strict=False):
        samples = [
            {
                "index": i,
                "key": 10000 + 7 * i,
                "depth": i / len(row),
                "distance": length // 2,
                "correct": bool(c),
            }
            for i, c in enumerate(row)
        ]
        cells.append(
            Cell(task="passkey", method=method, metric="accuracy", length=length,
                 value=100 * float(row.mean()), n=len(row), detail={"samples": samples})
        )  # fmt: skip
    return Run(config={"task": "passkey", "params": params or PASSKEY_PARAMS}, cells=cells)


def simulated_pair(rng, docs=20, lengths=3, samples=100, rise=0.0, drop=0.0, noise=0.02):
    """(baseline, candidate) ppl and passkey runs of one model; ``rise``/``drop`` plant a regression."""
    tokens = rng.integers(1500, 4000, docs)
    mean = rng.normal(3.0, 0.3, docs)[None, :] - np.array([0.0, 0.05, 0.08])[:lengths, None]
    spread = noise * rng.uniform(0.5, 2.0, docs)  # some documents are noisier than others
    base = mean + spread * rng.standard_normal((lengths, docs))
    cand = mean + math.log1p(rise) + spread * rng.standard_normal((lengths, docs))
    p = rng.beta(6, 2, (lengths, samples))
    hits_b = rng.random((lengths, samples)) < p
    hits_c = rng.random((lengths, samples)) < np.clip(p - drop, 0, 1)
    return [(ppl_run(base, tokens), ppl_run(cand, tokens)), (passkey_run(hits_b), passkey_run(hits_c))]


def failure_rate(trials: int, options: GateOptions, seed: int, **planted) -> float:
    rng = np.random.default_rng(seed)
    fails = sum(run_gate(simulated_pair(rng, **planted), options).failed for _ in range(trials))
    return fails / trials


STRICT = GateOptions(max_ppl_rise=0.0, max_acc_drop=0.0, alpha=0.05, n_boot=1000)


def test_same_model_pairs_fail_at_most_alpha_without_tolerance():
    """Significance alone, six cells per pair (three lengths x two tasks), Holm-corrected."""
    assert failure_rate(300, STRICT, seed=1) <= 0.05


def test_same_model_pairs_fail_at_most_alpha_with_default_tolerances():
    assert failure_rate(150, GateOptions(n_boot=1000), seed=2) <= 0.05


def test_single_cell_test_is_calibrated_not_just_conservative():
    """One ppl length only, so no multiple-testing slack hides a mis-calibrated test: the false-alarm
    rate stays near alpha (not far below, which would mean a test too weak to catch anything)."""
    rng = np.random.default_rng(3)
    fails = 0
    for _ in range(400):
        (ppl_pair, _) = simulated_pair(rng, lengths=1)
        fails += run_gate([ppl_pair], STRICT).failed
    assert 0.02 <= fails / 400 <= 0.065


@pytest.mark.parametrize("planted", [{"rise": 0.05}, {"drop": 0.2}])
def test_planted_regressions_are_caught(planted):
    assert failure_rate(40, GateOptions(n_boot=1000), seed=4, **planted) == 1.0


def test_planted_rise_is_measured():
    rng = np.random.default_rng(5)
    result = run_gate(simulated_pair(rng, rise=0.05, noise=0.0), GateOptions(n_boot=1000))
    rises = [v.result.effect for v in result.cells if v.pair.base.task == "ppl"]
    assert rises == pytest.approx([0.05] * 3, abs=1e-9)
    assert all(v.verdict == "regression" for v in result.cells if v.pair.base.task == "ppl")


def _bootstrap_alarms(docs: int, trials: int = 600) -> tuple[float, float]:
    """False-alarm rates at alpha 5 % of the percentile bootstrap alone and of the gate's p-value (the
    larger of it and the sign-flip p) on pairs of one model's runs over ``docs`` documents."""
    from coca_eval.gate.stats import bootstrap_p, paired_ppl_ratio
    from coca_eval.intervals import resample_counts

    rng = np.random.default_rng(0)
    alarms = gate = 0
    for k in range(trials):
        tokens = rng.integers(1500, 4000, docs).astype(float)
        spread = 0.02 * rng.uniform(0.5, 2.0, docs)
        diff = spread * rng.standard_normal(docs) * tokens  # the NLL sums' differences
        counts = resample_counts(docs, 500, k)
        alarms += bootstrap_p((counts @ diff) / (counts @ tokens), 0, 500) <= 0.05
        gate += paired_ppl_ratio(np.zeros(docs), diff, tokens, 0.05, 500, k).p_value <= 0.05
    return alarms / trials, gate / trials


def test_the_bootstrap_alone_is_optimistic_with_few_documents_and_the_gate_is_not():
    """The false-alarm rates docs/ci-gate.md quotes for the percentile bootstrap at 4 and 8 documents,
    and the gate's own rate within alpha at both."""
    from pathlib import Path

    page = " ".join((Path(__file__).parents[1] / "docs" / "ci-gate.md").read_text().split())
    quoted = re.search(r"false alarms at (\d+) % with 4 documents and (\d+) % with 8", page)
    assert quoted, "the page no longer quotes the rates"
    for docs, percent in zip((4, 8), quoted.groups(), strict=True):
        bootstrap, gate = _bootstrap_alarms(docs)
        assert abs(100 * bootstrap - int(percent)) <= 2.5, (docs, bootstrap)
        assert bootstrap > 0.05 + 0.02 and gate <= 0.05 + 0.02, (docs, bootstrap, gate)
