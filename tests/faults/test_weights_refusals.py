"""Item 10: weights a run cannot read (cut short, a link to another file, a cut-off pickle) are one
line and exit 2 when the model loads, not a safetensors or pickle traceback."""

from __future__ import annotations

import shutil

import pytest
from fault_cli import assert_error_after_progress, tiny_ppl_args
from test_convert_refusals import _truncated_pickle, _truncated_weights, _weights_linked_to_the_config
from test_gate_cli import invoke

DAMAGE = {
    "truncated safetensors": _truncated_weights,
    "weights linked to the tokenizer": _weights_linked_to_the_config,
    "truncated pickle .bin": _truncated_pickle,
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_damaged_weights_are_one_line_when_the_model_loads(
    tmp_path, capsys, tiny_llama_dir, corpus_file, case
):
    model = tmp_path / "model"
    shutil.copytree(tiny_llama_dir, model)
    DAMAGE[case](model)
    output = tmp_path / "run.json"
    result = invoke(capsys, *tiny_ppl_args(model, corpus_file, output))
    assert_error_after_progress(result, 2, "cannot load model")
    assert not output.exists()


@pytest.mark.parametrize("ratio", ["0", "-2", "1", "inf"])
def test_an_outlier_ratio_that_flags_the_median_head_is_one_line(tmp_path, capsys, tiny_llama_dir, ratio):
    from fault_cli import assert_one_line_error

    output = tmp_path / "a.json"
    result = invoke(
        capsys,
        "analyze",
        "attention",
        "--model",
        tiny_llama_dir,
        "--outlier-ratio",
        ratio,
        "--output",
        output,
    )
    assert_one_line_error(result, 2, "--outlier-ratio must be a number above 1")
    assert not output.exists()
