"""Item 11: a device torch cannot use is refused before any model loads."""

from __future__ import annotations

import pytest
import torch
from fault_cli import assert_one_line_error
from test_gate_cli import invoke


@pytest.mark.parametrize(
    ("device", "message"),
    [("foo", "is not a device"), ("cuda:x", "is not a device"), ("cuda:99", "CUDA device")],
)
def test_unusable_device_is_one_line_exit_2(tmp_path, capsys, tiny_llama_dir, corpus_file, device, message):
    out = tmp_path / "out" / "x.json"
    args = ["--model", tiny_llama_dir, "--dataset", corpus_file, "--lengths", "32", "--doc-tokens", "128"]
    result = invoke(capsys, "ppl", *args, "--num-docs", "2", "--device", device, "--output", out)
    assert_one_line_error(result, 2, message)
    assert not out.parent.exists()  # refused before the journal or anything else was written


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_cuda_is_one_line_exit_2(tmp_path, capsys, tiny_llama_dir):
    out = tmp_path / "out" / "x.json"
    result = invoke(capsys, "passkey", "--model", tiny_llama_dir, "--device", "cuda", "--output", out)
    assert_one_line_error(result, 2, "0 CUDA device(s)")
    assert not out.parent.exists()
