"""A user's YAML spec file: a from-scratch variant or a fine-tune of a zoo model; mistakes are one line."""

from __future__ import annotations

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.catalog import ZOO
from coca_eval.zoo.finetune import FineTuneSpec
from coca_eval.zoo.recipe import Recipe, ZooSpec
from coca_eval.zoo.specfile import load_spec_file

FINETUNE = (
    "name: my-pi\nlabel: mine\ndescription: gentler PI\nbase: zoo-rope\npi_factor: 4\n"
    "stages: [{steps: 40}, {trainable: [q_proj], steps: 10}]\n"
    "recipe: {context: 2048, batch_size: 2, peak_lr: 1.0e-4}\n"
)


def _write(tmp_path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_a_user_variant_loads_from_yaml(tmp_path):
    text = "name: my-rope\nlabel: mine\ndescription: base 1e5\nposition: rope\n"
    text += "architecture: {rope_theta: 100000}\n"
    spec = load_spec_file(_write(tmp_path, text))
    assert isinstance(spec, ZooSpec)
    assert spec.architecture.rope_theta == 100000 and spec.recipe == Recipe()


def test_a_file_naming_a_base_is_a_fine_tune(tmp_path):
    spec = load_spec_file(_write(tmp_path, FINETUNE))
    assert isinstance(spec, FineTuneSpec)
    assert (spec.base, spec.pi_factor, spec.steps) == ("zoo-rope", 4.0, 50)
    assert spec.stages[1].trainable == ("q_proj",)
    assert spec.stage_recipe(0).steps == 40 and spec.stage_recipe(0).peak_lr == 1e-4
    assert spec.recipe.context == 2048 and spec.recipe.passkey_fraction == Recipe().passkey_fraction


def test_a_fine_tune_may_start_from_a_shipped_fine_tune(tmp_path):
    spec = load_spec_file(_write(tmp_path, FINETUNE.replace("base: zoo-rope", "base: zoo-rope-ft-coca")))
    assert spec.base == "zoo-rope-ft-coca"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nlabel: x\ndescription: x\nposition: sideways\n", "position"),
        ("name: x\nlabel: x\ndescription: x\nposition: rope\nrecipe: {stepz: 3}\n", "recipe.stepz"),
        ("name: [unclosed\n", "not valid YAML"),
        ("- a list\n- not a spec\n", "expected a mapping"),
        (FINETUNE.replace("base: zoo-rope", "base: zoo-nothing"), "base 'zoo-nothing' is not a zoo model"),
        (FINETUNE.replace("pi_factor: 4", "pi_factor: 0.5"), "pi_factor"),
        (FINETUNE.replace("peak_lr: 1.0e-4", "peak_lr: 1.0e-4, extra_books: true"), "base's books"),
        (FINETUNE.replace("stages: [{steps: 40}, {trainable: [q_proj], steps: 10}]\n", ""), "stages"),
    ],
)
def test_bad_spec_files_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(CocaEvalError, match=message):
        load_spec_file(_write(tmp_path, text))


def test_a_missing_spec_file_is_one_line(tmp_path):
    with pytest.raises(CocaEvalError, match="cannot read zoo spec"):
        load_spec_file(tmp_path / "absent.yaml")


def test_zoo_train_runs_a_fine_tune_file_from_its_base_weights(tmp_path, monkeypatch, capsys):
    from coca_eval.cli import main
    from coca_eval.zoo import finetune, training_data
    from coca_eval.zoo.catalog import shipped_dir

    calls = []
    monkeypatch.setattr(training_data.ZooData, "load", lambda vocab, extra: f"books {vocab} {extra}")
    monkeypatch.setattr(
        finetune,
        "finetune",
        lambda spec, run, base, data, device: (
            calls.append((spec.name, run, base, data, device)) or run / "model"
        ),
    )
    main(["zoo", "train", str(_write(tmp_path, FINETUNE)), "--out", str(tmp_path / "runs")])
    assert calls == [
        (
            "my-pi",
            tmp_path / "runs" / "my-pi",
            shipped_dir("zoo-rope"),
            f"books {ZOO['zoo-rope'].architecture.vocab_size} False",
            "cpu",
        )
    ]
    assert "my-pi: saved" in capsys.readouterr().out
