"""Shipping stores the trained weights in fp16: half the bytes, the same model up to fp16 rounding."""

from __future__ import annotations

import json

import pytest
import torch
from zoo_fixtures import micro_data, micro_spec

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.ship import ship
from coca_eval.zoo.train import train


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    return train(micro_spec("coca", steps=2), tmp_path_factory.mktemp("run") / "coca", micro_data())


def test_shipped_weights_are_fp16_and_predict_as_the_trained_ones(trained, tmp_path):
    from transformers import AutoModelForCausalLM

    dest = ship(trained, tmp_path / "shipped")
    fp32 = AutoModelForCausalLM.from_pretrained(trained, dtype=torch.float32)
    stored = AutoModelForCausalLM.from_pretrained(dest)
    assert {p.dtype for p in stored.parameters()} == {torch.float16}
    upcast = AutoModelForCausalLM.from_pretrained(dest, dtype=torch.float32)
    ids = torch.arange(20)[None] % 250  # (1, 20)
    with torch.no_grad():
        a, b = fp32(input_ids=ids).logits, upcast(input_ids=ids).logits  # (1, 20, vocab)
    assert torch.allclose(a, b, atol=1e-2) and not torch.equal(a, b)
    meta = json.loads((dest / "zoo.json").read_text())
    largest = max(p.abs().max().item() for p in fp32.parameters())
    assert meta["stored_dtype"] == "float16" and 0 < meta["stored_max_abs_error"] <= largest * 2**-11
    assert (dest / "tokenizer.json").is_file()
    assert type(upcast.model.layers[0].self_attn).__name__ == "CocaLlamaAttention"


def test_a_weight_too_large_for_fp16_is_refused(trained, tmp_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(trained)
    with torch.no_grad():
        model.lm_head.weight[0, 0] = 1e6
    big = tmp_path / "big"
    model.save_pretrained(big)
    (big / "zoo.json").write_text((trained / "zoo.json").read_text())
    with pytest.raises(CocaEvalError, match="does not fit in float16"):
        ship(big, tmp_path / "out")


def test_a_directory_without_zoo_json_is_refused(tmp_path):
    with pytest.raises(CocaEvalError, match="not a trained zoo model"):
        ship(tmp_path, tmp_path / "out")
