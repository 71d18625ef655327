"""Item 5: a zoo spec's ``name`` is a folder under ``--out``, never a path that writes elsewhere."""

from __future__ import annotations

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.names import run_dir_under

VARIANT = "name: {name}\nlabel: mine\ndescription: x\nposition: rope\nrecipe: {{steps: 2}}\n"
FINETUNE = (
    "name: {name}\nlabel: mine\ndescription: x\nbase: zoo-rope\nstages: [{{steps: 2}}]\n"
    "recipe: {{context: 64, batch_size: 2}}\n"
)
BAD_NAMES = ["/abs/dir", "../../x", "a/b", ".hidden", "..", "na me", "'x\\\\y'"]


@pytest.fixture
def no_training(monkeypatch):
    """Training stubbed out: the test sees which run folder each model would be written to."""
    from coca_eval.zoo import finetune, train, training_data

    calls = []
    monkeypatch.setattr(training_data.ZooData, "load", lambda vocab, extra: "books")
    monkeypatch.setattr(train, "train", lambda spec, run, data, device: calls.append(run) or run / "model")
    monkeypatch.setattr(
        finetune, "finetune", lambda spec, run, base, data, device: calls.append(run) or run / "model"
    )
    return calls


@pytest.mark.parametrize("kind", ["variant", "finetune"])
@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_name_that_is_a_path_is_refused(tmp_path, capsys, no_training, kind, name):
    spec = tmp_path / "spec.yaml"
    spec.write_text((VARIANT if kind == "variant" else FINETUNE).format(name=name))
    out = tmp_path / "deep" / "out"
    result = invoke(capsys, "zoo", "train", spec, "--out", out)
    assert_one_line_error(result, 2, "name")
    assert no_training == []
    assert not out.exists()


def test_a_plain_name_trains_in_its_folder(tmp_path, capsys, no_training):
    spec = tmp_path / "spec.yaml"
    spec.write_text(VARIANT.format(name="my-rope_1.5"))
    result = invoke(capsys, "zoo", "train", spec, "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert no_training == [tmp_path / "out" / "my-rope_1.5"]


def test_a_run_folder_linked_outside_out_is_refused(tmp_path, capsys, no_training):
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "my-rope").symlink_to(tmp_path / "elsewhere")
    spec = tmp_path / "spec.yaml"
    spec.write_text(VARIANT.format(name="my-rope"))
    result = invoke(capsys, "zoo", "train", spec, "--out", tmp_path / "out")
    assert_one_line_error(result, 2, "outside")
    assert no_training == []


def test_a_stage_folder_linked_outside_the_run_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "stage-1").symlink_to(tmp_path)
    with pytest.raises(CocaEvalError, match="outside"):
        run_dir_under(tmp_path / "run", "stage-1")
    assert run_dir_under(tmp_path / "run", "stage-2") == tmp_path / "run" / "stage-2"
