"""Item 6: side files copied beside weights (``convert``'s tokenizer and README, ``zoo ship``'s
tokenizer) never follow a link: a secret the link names is not copied into the output."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from test_gate_cli import invoke

sys.path.insert(0, str(Path(__file__).parents[1] / "zoo"))  # the micro zoo of tests/zoo
from zoo_fixtures import micro_data, micro_spec  # noqa: E402

from coca_eval.zoo.ship import ship  # noqa: E402
from coca_eval.zoo.train import train  # noqa: E402

SECRET = "root:$6$not-for-sharing\n"


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "private" / "shadow"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def _no_secret_under(folder):
    return all(SECRET not in p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("link", ["absolute", "relative-escape"])
def test_convert_skips_a_readme_linked_elsewhere(tmp_path, capsys, tiny_llama_dir, secret, link):
    source = tmp_path / "source"
    shutil.copytree(tiny_llama_dir, source)
    target = secret if link == "absolute" else "../private/shadow"
    (source / "README.md").symlink_to(target)
    out = tmp_path / "out"
    result = invoke(capsys, "convert", "--from-llama", source, out)
    assert result.returncode == 0, result.stderr
    assert not (out / "README.md").exists()
    assert _no_secret_under(out)
    assert "skipped" in result.stderr and "README.md" in result.stderr
    assert (out / "tokenizer.json").is_file()  # the plain side files still travel


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return train(micro_spec("rope", steps=2), tmp_path_factory.mktemp("run") / "rope", micro_data())


def test_ship_skips_a_linked_tokenizer(tmp_path, trained, secret, capsys):
    model_dir = tmp_path / "model"
    shutil.copytree(trained, model_dir)
    (model_dir / "tokenizer.json").unlink()
    (model_dir / "tokenizer.json").symlink_to(secret)
    dest = ship(model_dir, tmp_path / "shipped")
    assert not (dest / "tokenizer.json").exists()
    assert _no_secret_under(dest)
    err = capsys.readouterr().err
    assert "skipped" in err and "tokenizer.json" in err
    assert (dest / "tokenizer_config.json").is_file()  # the plain side files still travel
