"""``analyze decay --head-dim``: the closed forms for a described rotary table, with no model.

The frequencies come from transformers' rotary code through the project's patches; each is checked
against the formula the patch stands for, and the command against bad input.
"""

import json

import numpy as np
import pytest

from coca_eval.analyses import closed_forms as cf
from coca_eval.analyses.geometry import RotaryGeometry, closed_form_cell, rotary_table
from coca_eval.cli import main
from coca_eval.errors import CocaEvalError
from coca_eval.models.rope import parse_rope
from coca_eval.results import load_run


def plain_theta(base: float, dim: int) -> np.ndarray:
    return base ** (-np.arange(0, dim, 2) / dim)  # (d/2,)


def test_no_patch_is_the_roformer_table():
    theta, scaling = rotary_table(RotaryGeometry(head_dim=64, base=500.0), parse_rope("none"), 128)
    assert np.allclose(theta, plain_theta(500.0, 64), rtol=1e-6) and scaling == pytest.approx(1.0)


def test_pi_divides_every_frequency():
    theta, _ = rotary_table(RotaryGeometry(head_dim=32), parse_rope("linear:4"), 128)
    assert np.allclose(theta, plain_theta(10000.0, 32) / 4, rtol=1e-6)


def test_dynamic_ntk_acts_only_past_the_trained_length():
    geometry = RotaryGeometry(head_dim=32, trained_length=256)
    inside, _ = rotary_table(geometry, parse_rope("dynamic:2"), 256)
    outside, _ = rotary_table(geometry, parse_rope("dynamic:2"), 1024)
    stretched = 10000.0 * (2 * 1024 / 256 - 1) ** (32 / 30)  # transformers' dynamic NTK base at 1024
    assert np.allclose(inside, plain_theta(10000.0, 32), rtol=1e-6)
    assert np.allclose(outside, plain_theta(stretched, 32), rtol=1e-5)


def test_prope_freezes_the_lowest_quarter():
    theta, _ = rotary_table(RotaryGeometry(head_dim=64, rope_fraction=0.75), parse_rope("none"), 64)
    assert np.allclose(theta[:24], plain_theta(10000.0, 64)[:24], rtol=1e-6) and np.all(theta[24:] == 0)


def test_cell_holds_the_closed_forms_and_the_bound_left():
    cell = closed_form_cell(RotaryGeometry(head_dim=16), parse_rope("none"), 300, 8, 0, None)
    geometry = cell.detail["geometries"][0]
    distances = np.asarray(cell.detail["distances"])
    expected = cf.relative_bound(plain_theta(10000.0, 16), distances)
    assert np.allclose(geometry["roformer"], expected, atol=1e-3)  # float32 table: phase error ~1e-5
    assert cell.value == pytest.approx(expected[-1] / expected[0], abs=1e-4) and cell.detail["measured"] == []


@pytest.mark.parametrize(
    "geometry",
    [dict(head_dim=3), dict(head_dim=64, base=1.0), dict(head_dim=64, rope_fraction=1.5)],
)
def test_impossible_geometry_is_refused(geometry):
    with pytest.raises(CocaEvalError):
        RotaryGeometry(**geometry)


def test_command_writes_one_cell_per_rope_and_length(tmp_path):
    out = tmp_path / "decay.json"
    args = ["analyze", "decay", "--head-dim", "32", "--base", "1000", "--lengths", "128,512"]
    main([*args, "--rope", "none", "--rope", "yarn:4", "--trained-length", "128", "--output", str(out)])
    run = load_run(out)
    assert [(c.method, c.length) for c in run.cells] == [
        ("theta=1000 d=32", 128),
        ("theta=1000 d=32", 512),
        ("theta=1000 d=32, YaRN x4", 128),
        ("theta=1000 d=32, YaRN x4", 512),
    ]
    assert json.loads(out.read_text())["config"]["params"]["geometry"]["trained_length"] == 128


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "smollm2-135m", "--head-dim", "64"], "leave out --model"),
        (["--base", "500"], "need --head-dim"),
        (["--head-dim", "64", "--rope", "linear:0.5"], "invalid rope patch"),
        (["--head-dim", "64", "--lengths", "1"], "below the shortest decay can build, 2 tokens"),
    ],
)
def test_bad_geometry_options_are_one_line(tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", "decay", *extra, "--output", str(tmp_path / "d.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(err) == 1 and message in err[0]
    assert not (tmp_path / "d.json").exists()
