"""Folding CoCA's pair means into the projection weights gives the run-time rules' numbers."""

from __future__ import annotations

import pytest
import torch

from coca_eval.models.coca.attention import collinear_coefficients, tie_query_halves
from coca_eval.models.vllm_plugin.ops import fold_coca_projection_, fold_pair_means_

HEADS, KV, D, HIDDEN = 4, 2, 32, 48


def per_head(fn, x: torch.Tensor) -> torch.Tensor:
    return fn(x.view(x.shape[0], -1, D)).reshape(x.shape)  # [T, n*d]


@pytest.mark.parametrize("strict", [False, True])
def test_folded_projection_equals_run_time_rules(strict):
    torch.manual_seed(0)
    q_size, kv_size = HEADS * D, KV * D
    weight = torch.randn(q_size + 2 * kv_size, HIDDEN)  # [(h + 2kv) d, hidden], fused q | t | v
    bias = torch.randn(q_size + 2 * kv_size)  # [(h + 2kv) d]
    x = torch.randn(7, HIDDEN)  # [T, hidden]
    q, t, v = torch.nn.functional.linear(x, weight, bias).split([q_size, kv_size, kv_size], -1)
    folded_w, folded_b = weight.clone(), bias.clone()
    q_rows, t_rows = slice(0, q_size), slice(q_size, q_size + kv_size)
    fold_coca_projection_(folded_w, folded_b, q_rows, t_rows, D, strict)
    fq, ft, fv = torch.nn.functional.linear(x, folded_w, folded_b).split([q_size, kv_size, kv_size], -1)

    torch.testing.assert_close(ft.relu(), per_head(collinear_coefficients, t.clone()), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fq, per_head(tie_query_halves, q) if strict else q, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fv, v)  # values untouched
    assert not torch.allclose(ft.relu(), t.relu())  # the fold changed something


def test_fold_is_idempotent_and_rejects_integer_weights():
    rows = torch.randn(2 * D, 5)  # [2 heads * d, in]
    fold_pair_means_(rows, D)
    once = rows.clone()
    fold_pair_means_(rows, D)
    torch.testing.assert_close(rows, once)
    with pytest.raises(ValueError, match="unquantized"):
        fold_pair_means_(torch.zeros(2 * D, 5, dtype=torch.int8), D)


def test_fold_along_a_head_axis_equals_folding_each_head():
    """NeoX keeps per-head [q | t | v] rows: folding the t block of every head at once (axis 1)."""
    weight = torch.randn(3, 3 * D, 5)  # [heads, 3d, in]
    expected = weight.clone()
    for head in expected:
        fold_pair_means_(head[D : 2 * D], D)
    fold_pair_means_(weight[:, D : 2 * D], D, axis=1)
    torch.testing.assert_close(weight, expected, rtol=0, atol=0)
