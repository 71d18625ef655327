"""``angles``: collinear q and k give no anomalous triple, a planted angle above pi makes every
triple anomalous with the closed-form tau, and CoCA comes out at zero where RoPE does not."""

import math

import numpy as np
import pytest
import torch
from planted import HEAD_DIM, PLANES, constant_qk, plant

from coca_eval.analyses.records import AngleDetail

THETA = np.array([10000.0 ** (-2 * j / HEAD_DIM) for j in range(PLANES)])
LENGTH = 64


def _planes(seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(PLANES, generator=generator), torch.randn(PLANES, generator=generator))


def _angles(analyse, model) -> tuple[float, AngleDetail]:
    # each model's own results file: one file holds one set of methods
    cell = analyse("angles", model, pairs=512, output=model.parent / f"angles-{model.name}.json").cells[0]
    return cell.value, AngleDetail.model_validate(cell.detail)


def test_q_collinear_with_k_has_no_anomalous_share(analyse, tmp_path):
    q = _planes()
    model = plant(tmp_path / "collinear", constant_qk(q, 2.5 * q), attention_bias=True)
    share, detail = _angles(analyse, model)
    assert share == 0.0 and sum(map(sum, detail.hist)) > 0 and detail.zero_keys == 0


def test_planted_angle_above_pi_is_anomalous_for_its_tau_nearest_tokens(analyse, tmp_path):
    q, phi = _planes(), 1.5 * math.pi  # k_j = q_j rotated back by phi: Theta_j = phi in every plane
    model = plant(tmp_path / "rotated", constant_qk(q, q * np.exp(-1j * phi)), attention_bias=True)
    share, detail = _angles(analyse, model)
    tau = np.minimum((2 * math.pi - phi) / THETA, LENGTH)  # (P,) capped at the length
    assert share == 1.0
    assert detail.mean_tokens_affected == pytest.approx([tau.mean()] * 2, rel=1e-4)


def test_coca_is_at_zero_where_rope_is_not(analyse, tiny_llama_dir, tmp_path):
    from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM

    coca = plant(
        tmp_path / "coca", lambda m: None, config_class=CocaLlamaConfig, model_class=CocaLlamaForCausalLM
    )
    coca_share, coca_detail = _angles(analyse, coca)
    rope_share, _ = _angles(analyse, plant(tmp_path / "rope", lambda m: None))
    assert coca_share == 0.0 and coca_detail.collinear and sum(map(sum, coca_detail.hist)) > 0
    assert 0.3 < rope_share < 0.7  # random q and k: about half the angles exceed pi


def test_p_rope_frozen_planes_are_left_out_and_nope_is_refused(analyse, tmp_path):
    from coca_eval.errors import CocaEvalError
    from coca_eval.models.prope import PRopeLlamaConfig, PRopeLlamaForCausalLM

    classes = dict(config_class=PRopeLlamaConfig, model_class=PRopeLlamaForCausalLM)
    half = plant(tmp_path / "half", lambda m: None, rope_fraction=0.5, **classes)
    _, detail = _angles(analyse, half)
    assert detail.unrotated_planes == 2 * PLANES // 2  # 2 layers x the lowest half of the planes
    assert all(row[PLANES // 2 :] == [0.0] * (PLANES // 2) for row in detail.share)
    nope = plant(tmp_path / "nope", lambda m: None, rope_fraction=0.0, **classes)
    with pytest.raises(CocaEvalError, match="no rotary plane rotates \\(NoPE\\)"):
        analyse("angles", nope, output=tmp_path / "nope.json")
