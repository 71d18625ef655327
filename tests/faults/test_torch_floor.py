"""Item 10: pickle (.bin) weights are converted only by a torch whose ``weights_only`` loading is safe
(2.6 on), and the package states that floor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.models import convert

ROOT = Path(__file__).resolve().parents[2]


def _pickle_checkpoint(directory: Path) -> Path:
    """A llama checkpoint as older tools saved it: config.json and pytorch_model.bin, no safetensors."""
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    torch.save({"model.layers.0.self_attn.k_proj.weight": torch.zeros(2, 2)}, directory / "pytorch_model.bin")
    return directory


@pytest.mark.parametrize("from_llama", [False, True])
def test_pickle_weights_under_old_torch_are_refused_in_one_line(tmp_path, capsys, monkeypatch, from_llama):
    monkeypatch.setattr(convert, "torch_version", lambda: (2, 5))
    source, out = _pickle_checkpoint(tmp_path / "ckpt"), tmp_path / "out"
    flag = ["--from-llama"] if from_llama else []
    result = invoke(capsys, "convert", source, out, *flag)
    assert_one_line_error(result, 2, str(source), "pickle (.bin) weights", "torch 2.5", "torch >= 2.6")
    assert not out.exists()


def test_safetensors_checkpoint_converts_under_old_torch(tmp_path, capsys, monkeypatch, tiny_llama_dir):
    monkeypatch.setattr(convert, "torch_version", lambda: (2, 5))
    out = tmp_path / "out"
    result = invoke(capsys, "convert", tiny_llama_dir, out, "--from-llama")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (out / "config.json").is_file()


@pytest.mark.parametrize(
    ("version", "safe"), [((2, 4), False), ((2, 5), False), ((2, 6), True), ((3, 0), True)]
)
def test_the_floor_is_torch_2_6(monkeypatch, version, safe):
    monkeypatch.setattr(convert, "torch_version", lambda: version)
    assert convert.pickle_loading_is_safe() is safe


def test_the_installed_torch_version_is_read():
    assert convert.torch_version() == tuple(int(p) for p in torch.__version__.split(".")[:2])


def test_pyproject_states_the_torch_floor():
    tomllib = pytest.importorskip("tomllib")
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch_requirement,) = [d for d in dependencies if d.replace(" ", "").startswith("torch")]
    assert torch_requirement.replace(" ", "") == "torch>=2.6"
