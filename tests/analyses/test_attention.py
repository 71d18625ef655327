"""``attention``: a planted loud head is reported; the blocked logits equal a dense reference."""

import pytest
import torch
from planted import loud_head, plant

from coca_eval.analyses import logits
from coca_eval.analyses.records import AttentionDetail


def test_planted_outlier_head_is_reported(analyse, tmp_path):
    model = plant(tmp_path / "loud", loud_head(layer=1, head=2, factor=30.0))
    cell = analyse("attention", model, lengths="64,128", near=8).cells[-1]
    detail = AttentionDetail.model_validate(cell.detail)
    assert [(o["layer"], o["head"]) for o in detail.outliers] == [(1, 2)]
    assert cell.value == detail.max_logit[1][2]


def test_blocked_extremes_equal_dense_scores(monkeypatch):
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 4, 40, 8, generator=generator)  # (1, h, n, d)
    k = torch.randn(1, 2, 40, 8, generator=generator)  # (1, kv, n, d)
    monkeypatch.setattr(logits, "BLOCK_BYTES", 4 * 4 * 40 * 3)  # three rows per block
    top, mass = logits.head_extremes(q, k, 0.5, window=10, near=4, last_rows=5)
    keys = k.repeat_interleave(2, dim=1)  # (1, h, n, d)
    scores = (q @ keys.transpose(-1, -2))[0] * 0.5  # (h, n, n)
    rows, cols = torch.arange(40)[:, None], torch.arange(40)[None, :]
    seen = (cols <= rows) & (cols > rows - 10)  # (n, n)
    scores = scores.masked_fill(~seen, -torch.inf)  # (h, n, n)
    probs = scores[:, -5:].softmax(-1)  # (h, 5, n)
    near = (rows[-5:] - cols) < 4  # (5, n)
    assert top.tolist() == pytest.approx(scores.amax(dim=(1, 2)).tolist(), rel=1e-6)
    assert mass.tolist() == pytest.approx((probs * near).sum(-1).mean(-1).tolist(), rel=1e-6)
