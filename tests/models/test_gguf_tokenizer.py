"""A preset's tokenizer alone, read out of its GGUF without converting the weights."""

from __future__ import annotations

import json

import pytest

from coca_eval.assets import cache_dir
from coca_eval.models.gguf import materialize_tokenizer
from coca_eval.models.presets import GEMMA3_270M, SMOLLM2_135M


@pytest.mark.realmodel
def test_gemma_tokenizer_without_weights():
    from transformers import AutoTokenizer

    path = materialize_tokenizer(GEMMA3_270M)
    if path == cache_dir() / "models" / GEMMA3_270M.name:
        pytest.skip("the fully converted model is cached and is used instead")
    assert not list(path.glob("*.safetensors"))
    assert json.loads((path / "provenance.json").read_text())["gguf_sha256"] == GEMMA3_270M.gguf_sha256
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert len(tokenizer) == 262144 and tokenizer("hi").input_ids[0] == tokenizer.bos_token_id


@pytest.mark.realmodel
def test_smollm2_tokenizer_keeps_its_chat_template():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(materialize_tokenizer(SMOLLM2_135M))
    assert len(tokenizer) == 49152 and "<|im_start|>" in tokenizer.chat_template
    assert tokenizer("hi").input_ids[0] != tokenizer.bos_token_id
