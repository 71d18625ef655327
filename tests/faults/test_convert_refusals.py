"""Item 10: ``convert`` on a config or weights it cannot read is one line and exit 2, and writes no
output folder."""

from __future__ import annotations

import shutil

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke


def _config_list(source):
    (source / "config.json").write_text('[{"model_type": "llama"}]')


def _config_latin1(source):
    text = (source / "config.json").read_text()
    (source / "config.json").write_bytes(text.replace("{", '{"note": "caf\xe9",', 1).encode("latin-1"))


def _truncated_weights(source):
    weights = source / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])


def _weights_linked_to_the_config(source):
    (source / "model.safetensors").unlink()
    (source / "model.safetensors").symlink_to(source / "tokenizer.json")


def _truncated_pickle(source):
    import torch
    from safetensors.torch import load_file

    state = load_file(source / "model.safetensors")
    (source / "model.safetensors").unlink()
    torch.save(state, source / "pytorch_model.bin")
    data = (source / "pytorch_model.bin").read_bytes()
    (source / "pytorch_model.bin").write_bytes(data[: len(data) // 2])


BROKEN = {  # case: (how the source is damaged, what the one line says)
    "config is a JSON list": (_config_list, "not an object"),
    "config is not UTF-8": (_config_latin1, "not UTF-8"),
    "truncated safetensors": (_truncated_weights, "model.safetensors"),
    "weights linked to the tokenizer": (_weights_linked_to_the_config, "model.safetensors"),
    "truncated pickle .bin": (_truncated_pickle, "pytorch_model.bin"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_source_convert_cannot_read_is_one_line(tmp_path, capsys, tiny_llama_dir, case):
    damage, fragment = BROKEN[case]
    source = tmp_path / "source"
    shutil.copytree(tiny_llama_dir, source)
    damage(source)
    out = tmp_path / "out"
    result = invoke(capsys, "convert", "--from-llama", source, out)
    assert_one_line_error(result, 2, fragment)
    assert not out.exists()
