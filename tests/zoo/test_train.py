"""The recipe learns, is deterministic, resumes exactly, and saves loadable checkpoints."""

from __future__ import annotations

import json

import pytest
import torch
from zoo_fixtures import micro_data, micro_spec

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.batches import TrainingStream
from coca_eval.zoo.build import build_model
from coca_eval.zoo.train import make_optimizer, next_token_loss, train, train_step


@pytest.fixture(scope="module")
def data():
    return micro_data()


def _fresh(spec, data):
    torch.manual_seed(spec.recipe.seed)
    return build_model(spec, data.tokenizer.eos_token_id, data.tokenizer.pad_token_id)


def test_one_step_lowers_the_loss_on_a_fixed_batch(data):
    spec = micro_spec()
    model = _fresh(spec, data)
    optimizer = make_optimizer(model, spec.recipe)
    rows = TrainingStream(spec.recipe, data.tokenizer, data.train_texts).batch(0)
    before = next_token_loss(model, rows).item()
    train_step(model, optimizer, rows, lr=1e-2, clip=1.0)
    assert next_token_loss(model, rows).item() < before - 1e-3


def _weights(run_dir):
    from safetensors.torch import load_file

    return load_file(run_dir / "model" / "model.safetensors")


def test_same_seed_gives_identical_weights(tmp_path, data):
    spec = micro_spec()
    a, b = (
        _weights_after(train(spec, tmp_path / "a", data)),
        _weights_after(train(spec, tmp_path / "b", data)),
    )
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def _weights_after(model_dir):
    return _weights(model_dir.parent)


def test_a_different_seed_gives_different_weights(tmp_path, data):
    spec = micro_spec()
    other = spec.model_copy(update={"recipe": spec.recipe.model_copy(update={"seed": 1})})
    a, b = (
        _weights_after(train(spec, tmp_path / "a", data)),
        _weights_after(train(other, tmp_path / "b", data)),
    )
    assert any(not torch.equal(a[k], b[k]) for k in a)


def test_resume_after_a_kill_equals_an_uninterrupted_run(tmp_path, data, monkeypatch):
    import coca_eval.zoo.train as train_module

    spec = micro_spec(steps=6)
    whole = _weights_after(train(spec, tmp_path / "whole", data))
    real_step, calls = train_module.train_step, []

    def killed_after_four(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # the step after the step-4 checkpoint never finishes
            raise KeyboardInterrupt
        return real_step(*args, **kwargs)

    monkeypatch.setattr(train_module, "train_step", killed_after_four)
    with pytest.raises(KeyboardInterrupt):
        train(spec, tmp_path / "cut", data)
    monkeypatch.setattr(train_module, "train_step", real_step)
    assert torch.load(tmp_path / "cut" / "checkpoint.pt", weights_only=True)["step"] == 4
    resumed = _weights_after(train(spec, tmp_path / "cut", data))
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
    steps = [
        json.loads(line)["step"] for line in (tmp_path / "cut" / "train_log.jsonl").read_text().splitlines()
    ]
    assert steps == sorted(set(steps))  # resumed log lines are not duplicated


def test_a_checkpoint_of_another_spec_is_refused(tmp_path, data):
    train(micro_spec(steps=2), tmp_path / "run", data)
    with pytest.raises(CocaEvalError, match="different zoo spec"):
        train(micro_spec(steps=4), tmp_path / "run", data)


@pytest.mark.parametrize(
    ("position", "fields", "attention"),
    [("rope", {}, "LlamaAttention"), ("coca", {"coca_variant": "strict"}, "CocaLlamaAttention")],
)
def test_saved_model_loads_with_auto_classes_and_keeps_its_attention(
    tmp_path, data, position, fields, attention
):
    from transformers import AutoModelForCausalLM

    saved = train(micro_spec(position, steps=2, **fields), tmp_path / position, data)
    meta = json.loads((saved / "zoo.json").read_text())
    assert meta["steps"] == 2 and meta["tokens"] == 2 * 2 * 32
    assert meta["heldout_loss"] > 0 and meta["final_train_loss"] > 0
    model = AutoModelForCausalLM.from_pretrained(saved)
    assert type(model.model.layers[0].self_attn).__name__ == attention
    if position == "coca":
        assert model.config.coca_variant == "strict"


def test_meta_records_the_cpu_that_ran_the_steps(tmp_path, data):
    saved = train(micro_spec("rope", steps=1), tmp_path / "cpu", data, device="cpu")
    meta = json.loads((saved / "zoo.json").read_text())
    assert meta["machine"].endswith(f"{torch.get_num_threads()} threads")


@pytest.mark.parametrize(
    ("device", "message"),
    [("cuda:7", "no CUDA GPU is visible"), ("tpu", "unknown device"), ("meta", "runs on cpu or cuda")],
)
def test_a_device_that_cannot_train_is_one_line(monkeypatch, device, message):
    from coca_eval.zoo.hardware import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(CocaEvalError, match=message):
        resolve_device(device)


def test_zoo_train_on_a_missing_gpu_exits_2_before_reading_books(monkeypatch, capsys):
    from coca_eval.cli import main
    from coca_eval.zoo import training_data

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(training_data.ZooData, "load", lambda *a: pytest.fail("read the books first"))
    with pytest.raises(SystemExit) as exited:
        main(["zoo", "train", "zoo-rope", "--device", "cuda"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert "no CUDA GPU is visible" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
