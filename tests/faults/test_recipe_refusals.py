"""Item 10: a zoo spec whose recipe or shape cannot train (or cannot fit in memory), a non-UTF-8 spec
or methods file, and a probe that cannot read what it asks for are each one line and exit 2, before
anything is written."""

from __future__ import annotations

import pytest
from fault_cli import assert_error_after_progress, assert_one_line_error
from test_gate_cli import invoke

VARIANT = "name: my-rope\nlabel: mine\ndescription: x\nposition: rope\n"
FINETUNE = "name: my-ft\nlabel: mine\ndescription: x\nbase: zoo-rope\n"
MEMORY = "cannot train in this machine's memory"  # sizes no machine holds: refused before any tensor

BAD_SPECS = {
    "steps 0": (VARIANT + "recipe: {steps: 0}\n", "recipe.steps"),
    "steps negative": (VARIANT + "recipe: {steps: -5}\n", "recipe.steps"),
    "checkpoint_every 0": (VARIANT + "recipe: {checkpoint_every: 0}\n", "recipe.checkpoint_every"),
    "batch_size 0": (VARIANT + "recipe: {batch_size: 0}\n", "recipe.batch_size"),
    "context 1": (VARIANT + "recipe: {context: 1}\n", "recipe.context"),
    "eval_windows 0": (VARIANT + "recipe: {eval_windows: 0}\n", "recipe.eval_windows"),
    "beta 1": (VARIANT + "recipe: {betas: [0.9, 1.0]}\n", "betas"),
    "beta negative": (VARIANT + "recipe: {betas: [-0.1, 0.95]}\n", "betas"),
    "peak_lr negative": (VARIANT + "recipe: {peak_lr: -0.001}\n", "recipe.peak_lr"),
    "grad_clip negative": (VARIANT + "recipe: {grad_clip: -1}\n", "recipe.grad_clip"),
    "warmup_fraction negative": (VARIANT + "recipe: {warmup_fraction: -0.1}\n", "recipe.warmup_fraction"),
    "weight_decay negative": (VARIANT + "recipe: {weight_decay: -0.1}\n", "recipe.weight_decay"),
    "heads do not divide width": (VARIANT + "architecture: {num_attention_heads: 7}\n", "divide"),
    "zero layers": (VARIANT + "architecture: {num_hidden_layers: 0}\n", "num_hidden_layers"),
    "fine-tune with no stages": (FINETUNE + "stages: []\nrecipe: {context: 64}\n", "stages"),
    "width of a million": (VARIANT + "architecture: {hidden_size: 1000000}\n", MEMORY),
    "vocabulary of a billion": (VARIANT + "architecture: {vocab_size: 1000000000}\n", MEMORY),
    "batch of 1e5 x 1e5 tokens": (VARIANT + "recipe: {batch_size: 100000, context: 100000}\n", MEMORY),
    "fine-tune at 1e9 tokens": (FINETUNE + "stages: [{steps: 1}]\nrecipe: {context: 1000000000}\n", MEMORY),
}


@pytest.fixture
def no_training(monkeypatch):
    """Training stubbed out: a spec that got past the checks is recorded rather than trained."""
    from coca_eval.zoo import finetune, train, training_data

    calls = []
    monkeypatch.setattr(training_data.ZooData, "load", lambda vocab, extra: "books")
    monkeypatch.setattr(train, "train", lambda spec, run, *a: calls.append(spec) or run / "model")
    monkeypatch.setattr(finetune, "finetune", lambda spec, run, *a: calls.append(spec) or run / "model")
    return calls


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_a_spec_that_cannot_train_is_one_line(tmp_path, capsys, no_training, case):
    text, fragment = BAD_SPECS[case]
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    out = tmp_path / "out"
    result = invoke(capsys, "zoo", "train", spec, "--out", out)
    assert_one_line_error(result, 2, fragment)
    assert no_training == [] and not out.exists()


def test_a_non_utf8_spec_is_one_line(tmp_path, capsys, no_training):
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(VARIANT.encode() + b"# caf\xe9\n")
    result = invoke(capsys, "zoo", "train", spec, "--out", tmp_path / "out")
    assert_one_line_error(result, 2, "UTF-8")
    assert no_training == []


def test_a_non_utf8_methods_file_is_one_line(tmp_path, capsys):
    methods = tmp_path / "methods.yaml"
    methods.write_bytes(b"methods:\n  - {model: zoo-rope, label: caf\xe9}\n")
    out = tmp_path / "out.json"
    result = invoke(capsys, "ppl", "--methods", methods, "--output", out)
    assert_one_line_error(result, 2, "UTF-8", str(methods))
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--passage", "1"], "--passage"),
        (["--passage", "0"], "--passage"),
        (["--window", "1"], "--window"),
        (["--window", "-3"], "--window"),
        (["--window", "100000000"], "--passage/--window"),
        (["--passage", "100000000"], "--passage/--window"),
    ],
)
def test_a_probe_that_cannot_read_its_passage_or_window_is_one_line(tmp_path, capsys, flags, fragment):
    book = tmp_path / "book.txt"  # one short document, long enough for the default passage
    book.write_text(" ".join(f"word{i % 50}" for i in range(400)))
    result = invoke(capsys, "zoo", "probe", "zoo-rope", "--dataset", book, "--window", "64", *flags)
    if fragment == "--passage/--window":  # found once the tokenizer has counted the tokens
        assert_error_after_progress(result, 2, fragment)
    else:
        assert_one_line_error(result, 2, fragment)
    assert result.stdout.strip() == ""


@pytest.mark.parametrize("damage", ["truncated", "not a checkpoint"])
def test_a_damaged_checkpoint_is_one_line(tmp_path, damage):
    import sys
    from pathlib import Path

    import torch

    sys.path.insert(0, str(Path(__file__).parents[1] / "zoo"))  # the micro zoo of tests/zoo
    from zoo_fixtures import micro_data, micro_spec

    from coca_eval.errors import CocaEvalError
    from coca_eval.zoo.train import train

    run = tmp_path / "run"
    run.mkdir()
    if damage == "truncated":
        torch.save({"spec": "x", "model": {"w": torch.zeros(1000)}}, run / "checkpoint.pt")
        data = (run / "checkpoint.pt").read_bytes()
        (run / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    else:
        torch.save([1, 2, 3], run / "checkpoint.pt")
    with pytest.raises(CocaEvalError, match="checkpoint.pt .*move it away"):
        train(micro_spec("rope", steps=2), run, micro_data())
    assert not (run / "model").exists()
