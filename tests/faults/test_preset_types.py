"""Item 16: a preset file with a value of the wrong type is one line naming the file and the field."""

from __future__ import annotations

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.presets import get_preset, list_presets

PPL_HEAD = "name: mine\ntask: ppl\n"
PASSKEY_HEAD = "name: mine\ntask: passkey\n"

# (file text, the field the error must name)
BAD_PPL = {
    "lengths a number": (PPL_HEAD + "params:\n  lengths: 5\n", "params.lengths"),
    "lengths bad grammar": (PPL_HEAD + "params:\n  lengths: 512..abc\n", "params.lengths"),
    "lengths list of text": (PPL_HEAD + "params:\n  lengths: [a, b]\n", "params.lengths"),
    "dataset a number": (PPL_HEAD + "params:\n  dataset: 5\n", "params.dataset"),
    "params a list": (PPL_HEAD + "params: [abc]\n", "params"),
    "seed text": (PPL_HEAD + "params:\n  seed: x\n", "params.seed"),
    "num_docs zero": (PPL_HEAD + "params:\n  num_docs: 0\n", "params.num_docs"),
    "stride true": (PPL_HEAD + "params:\n  stride: true\n", "params.stride"),
    "mode unknown": (PPL_HEAD + "params:\n  mode: rolling\n", "params.mode"),
    "unknown parameter": (PPL_HEAD + "params:\n  num_doc: 3\n", "params.num_doc"),
    "no task": ("name: mine\nparams:\n  seed: 0\n", "task"),
    "name a list": ("name: [a]\ntask: ppl\n", "name"),
    "methods a number": (PPL_HEAD + "methods: 5\n", "methods"),
    "misspelt params key": (PPL_HEAD + "param:\n  seed: 0\n", "param"),
    "not a mapping": ("- a\n- b\n", "expected a mapping of name, task and params (got a list)"),
    "empty file": ("", "expected a mapping of name, task and params (got nothing)"),
}


@pytest.mark.parametrize("case", sorted(BAD_PPL))
def test_ppl_preset_of_wrong_type_is_one_line_naming_file_and_field(tmp_path, capsys, case):
    text, field = BAD_PPL[case]
    preset = tmp_path / "mine.yaml"
    preset.write_text(text)
    out = tmp_path / "out" / "x.json"
    result = invoke(capsys, "ppl", "--preset", preset, "--model", tmp_path / "no-model", "--output", out)
    err = assert_one_line_error(result, 2, f"preset file {preset}: {field}")
    assert "model" not in err.split(field, 1)[1]  # refused before any model was looked for
    assert not out.parent.exists()


@pytest.mark.parametrize(
    ("line", "field"),
    [("samples: many", "params.samples"), ("max_new_tokens: -1", "params.max_new_tokens")],
)
def test_passkey_preset_of_wrong_type_is_one_line(tmp_path, capsys, line, field):
    preset = tmp_path / "mine.yaml"
    preset.write_text(PASSKEY_HEAD + f"params:\n  {line}\n")
    out = tmp_path / "out" / "x.json"
    result = invoke(capsys, "passkey", "--preset", preset, "--model", tmp_path / "no-model", "--output", out)
    assert_one_line_error(result, 2, f"preset file {preset}: {field}")
    assert not out.parent.exists()


def test_shipped_presets_all_pass_the_check():
    names = {p.name for p in list_presets()}
    assert {"zoo", "embedded", "pg19", "passkey", "zoo-passkey", "opencompass-table5"} <= names


def test_a_well_typed_user_preset_still_loads(tmp_path):
    preset = tmp_path / "mine.yaml"
    preset.write_text(
        PPL_HEAD + "params:\n  lengths: [512, 1024]\n  num_docs: null\n  seed: 3\n  dataset: book.txt\n"
    )
    loaded = get_preset(str(preset), task="ppl")
    assert loaded.params == {"lengths": [512, 1024], "num_docs": None, "seed": 3, "dataset": "book.txt"}
