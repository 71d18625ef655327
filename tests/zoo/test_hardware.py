"""bf16 autocast is used only where the hardware computes in bf16, and a run records what it used."""

from __future__ import annotations

import json

import pytest
import torch
from zoo_fixtures import micro_data, micro_spec

import coca_eval.zoo.hardware as hardware
import coca_eval.zoo.train as train_module
from coca_eval.zoo.train import train

CPU = torch.device("cpu")


@pytest.mark.parametrize(
    ("wanted", "native", "used"), [(True, True, True), (True, False, False), (False, True, False)]
)
def test_autocast_is_kept_only_where_bf16_is_native(monkeypatch, wanted, native, used):
    monkeypatch.setattr(hardware, "native_bf16", lambda device: native)
    assert hardware.use_bf16_autocast(wanted, CPU) is used


def test_a_cpu_without_onednn_bf16_kernels_has_no_native_bf16(monkeypatch):
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)
    assert hardware.native_bf16(CPU) is False
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: True)
    assert hardware.native_bf16(CPU) is True


def test_the_machine_is_named_with_its_cpu_capability_and_threads():
    described = hardware.machine_description(CPU)
    assert hardware.cpu_name() in described
    assert torch.backends.cpu.get_cpu_capability() in described
    assert described.endswith(f"{torch.get_num_threads()} threads")


@pytest.mark.parametrize("native", [False, True])
def test_training_steps_and_the_record_follow_the_hardware(tmp_path, monkeypatch, native):
    monkeypatch.setattr(hardware, "native_bf16", lambda device: native)
    real_step, seen = train_module.train_step, []

    def recording_step(model, optimizer, rows, lr, clip, bf16=False):
        seen.append(bf16)
        return real_step(model, optimizer, rows, lr, clip, bf16)

    monkeypatch.setattr(train_module, "train_step", recording_step)
    spec = micro_spec(steps=2)
    assert spec.recipe.bf16_autocast  # the recipe asks for it; the hardware decides
    saved = train(spec, tmp_path / "run", micro_data())
    assert seen == [native, native]
    assert json.loads((saved / "zoo.json").read_text())["bf16_autocast_used"] is native
