"""Every analysis on the decoder families with the most special cases: Gemma 3 (q/k norm, sliding and
global layers with their own frequencies) and NeoX-CoCA (fused qkv, partial rotary, collinear keys)."""

import math

import pytest
from families import build

from coca_eval.analyses.records import AngleDetail, AttentionDetail, DecayDetail


@pytest.mark.parametrize("family", ["gemma3", "coca_gpt_neox"])
def test_angles_decay_and_attention_run_on_the_family(analyse, tmp_path, family):
    model, heads, layers, planes = build(family, tmp_path / family)
    angles = analyse("angles", model, pairs=256).cells[0]
    decay = analyse("decay", model).cells[0]
    attention = analyse("attention", model, near=8).cells[0]
    assert all(c.status == "ok" and math.isfinite(c.value) for c in (angles, decay, attention))
    assert len(AngleDetail.model_validate(angles.detail).share) == layers
    assert (angles.value == 0.0) == (family == "coca_gpt_neox")  # collinear keys: none anomalous
    geometries = DecayDetail.model_validate(decay.detail).geometries
    assert [len(g.theta) for g in geometries] == [planes] * len(geometries)
    if family == "gemma3":  # sliding layers (base 10k) and the global layer (base 1M) differ
        assert sorted(g.layers for g in geometries) == [[0, 1], [2]]
    near_mass = AttentionDetail.model_validate(attention.detail).near_mass
    assert len(near_mass) == layers and all(0 < m <= 1 + 1e-6 for row in near_mass for m in row)
