"""``frequencies``: a planted frequency band is found, on every supported decoder family."""

import numpy as np
import pytest
from planted import PLANES, band_only, plant

from coca_eval.analyses.frequencies import dominant_planes, quarter_shares
from coca_eval.analyses.records import FrequencyDetail

BAND = [5, 6]


def test_planted_band_is_found(analyse, tmp_path):
    model = plant(tmp_path / "band", band_only(BAND))
    detail = FrequencyDetail.model_validate(analyse("frequencies", model).cells[0].detail)
    assert detail.dominant_planes == {"q": BAND, "k": BAND}
    outside = [j for j in range(PLANES) if j not in BAND]
    assert np.all(np.asarray(detail.layers.q)[:, outside] == 0) and np.all(
        np.asarray(detail.layers.k)[:, BAND] > 0
    )
    assert np.all(np.asarray(detail.layers.v)[:, outside] > 0)  # values are not planted: no band there


def test_planted_band_is_found_in_coca_coefficients(analyse, tmp_path):
    from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM

    model = plant(
        tmp_path / "coca", band_only(BAND), config_class=CocaLlamaConfig, model_class=CocaLlamaForCausalLM
    )
    detail = FrequencyDetail.model_validate(analyse("frequencies", model).cells[0].detail)
    assert detail.collinear and detail.dominant_planes["k"] == BAND


def test_quarter_shares_and_dominant_planes():
    maps = np.array([[4.0, 0, 0, 0, 0, 0, 0, 4.0], [1.0] * 8])
    low, high = quarter_shares(maps)
    assert low.tolist() == [0.5, 0.25] and high.tolist() == [0.5, 0.25]
    assert dominant_planes(np.array([0.1, 5.0, 0.2, 4.0])) == [1, 3]


@pytest.mark.parametrize("family", ["llama", "gemma3", "gpt_neox", "coca_llama", "coca_gpt_neox"])
def test_every_supported_family_gives_full_maps(analyse, tmp_path, family):
    from families import build

    model, heads, layers, planes = build(family, tmp_path / family)
    cell = analyse("frequencies", model, layers="1").cells[0]
    detail = FrequencyDetail.model_validate(cell.detail)
    assert np.asarray(detail.layers.q).shape == (layers, planes) and list(detail.heads) == ["1"]
    assert np.asarray(detail.heads["1"].q).shape == (heads, planes)
    assert 0 < cell.value < 1 and np.all(np.asarray(detail.theta) > 0)


def test_report_has_the_layer_summary_and_an_analyses_section(analyse, tmp_path):
    from coca_eval.report.build import build_report
    from coca_eval.report.definition import ReportDefinition

    run = analyse("frequencies", plant(tmp_path / "band", band_only(BAND)), output=tmp_path / "f.json")
    shares = run.cells[0].detail["shares"]
    output = build_report([tmp_path / "f.json"], ReportDefinition(), ["md", "html"], tmp_path / "report")
    layers = next(t for t in output.tables if t.name.startswith("frequencies_layers"))
    assert [e.text for e in layers.rows[1].entries] == [
        f"{shares[k][1]:.2f}" for k in ("q_low", "q_high", "k_low", "k_high")
    ]
    html = (tmp_path / "report" / "report.html").read_text()
    assert (
        '<h2 id="analyses">Analyses</h2>' in html and html.count("<figure>") == len(output.plots) == 4
    )  # layers, shares, heads of layers 0 and 1
