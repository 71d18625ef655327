"""``--source babilong``'s text span: a prompt whose tokenizer adds BOS keeps it out of the span a text
API is sent, and one whose tokenizer adds none sends it whole."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from coca_eval.babilong.builder import BabilongPromptBuilder
from coca_eval.babilong.params import make_babilong_params

sys.path.insert(0, str(Path(__file__).parents[1]))
from tiny_models import make_tokenizer  # noqa: E402

PREPARED = Path(__file__).parent / "data" / "prepared"


@pytest.mark.parametrize("add_bos", [True, False], ids=["bos", "no-bos"])
def test_the_text_span_of_a_prepared_prompt_leaves_out_only_the_tokenizers_bos(add_bos):
    values = {"tasks": "qa1", "lengths": "0k,1k", "samples": 2, "source": "babilong", "data": str(PREPARED)}
    params = make_babilong_params(values)
    tokenizer = make_tokenizer(add_bos=add_bos)
    builder = BabilongPromptBuilder(SimpleNamespace(kind=""), params, tokenizer, None)
    for length in params.lengths:
        for sample in builder.build("qa1", length, 2, 42, length):
            start, end = sample.text_span
            assert end == len(sample.ids)
            assert sample.ids[:start] == ([0] if add_bos else [])  # "<s>", the fixture tokenizer's id 0
            text = tokenizer.decode(sample.ids[start:end])
            assert text.startswith("I will give you context with the facts") and "<s>" not in text
