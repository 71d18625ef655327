"""The schedule has the paper's shape; the zoo entries differ only in position handling."""

from __future__ import annotations

import pytest

from coca_eval.zoo.catalog import ZOO
from coca_eval.zoo.recipe import Recipe, lr_at


def test_warmup_then_linear_decay_to_a_tenth():
    r = Recipe(steps=1000, peak_lr=1e-3, start_lr=1e-7, warmup_fraction=0.01, final_lr_ratio=0.1)
    assert lr_at(r, 0) == pytest.approx(1e-7)
    assert lr_at(r, 5) == pytest.approx(1e-7 + (1e-3 - 1e-7) * 0.5)
    assert lr_at(r, 10) == pytest.approx(1e-3)
    assert lr_at(r, 1000) == pytest.approx(1e-4)
    assert lr_at(r, 505) == pytest.approx(1e-3 * (1 - 0.9 * 0.5))


def test_zoo_entries_share_everything_but_position_handling():
    shared = {(s.recipe, s.architecture) for s in ZOO.values()}
    assert len(shared) == 1
    assert {
        "zoo-rope",
        "zoo-coca-slack",
        "zoo-coca-strict",
        "zoo-alibi",
        "zoo-nope",
        "zoo-prope-0.75",
    } <= set(ZOO)
