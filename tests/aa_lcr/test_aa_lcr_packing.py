"""AA-LCR's prompts in a real tokenizer's tokens: ``published`` holds the card's text tokenised whole,
at every length it fits, left out (never cut) of the others; ``exact`` holds exactly N minus the
answer budget, the question's own documents whole, first and in order, other documents after them (the
last cut), and leaves out a question whose own documents do not fit."""

from __future__ import annotations

from functools import cache

import pytest

from coca_eval.aa_lcr.data import questions
from coca_eval.aa_lcr.packing import Packer
from coca_eval.aa_lcr.params import AaLcrParams
from coca_eval.aa_lcr.prompts import answer_prompt
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder


@cache
def _tokenizer():
    from transformers import AutoTokenizer

    from coca_eval.models.presets import resolve_model

    return AutoTokenizer.from_pretrained(resolve_model("zoo-rope")[0])


def _packer(**values) -> Packer:
    tokenizer = _tokenizer()
    params = AaLcrParams(**values)

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False).input_ids

    builder = ExactPromptBuilder(encode, tokenizer.bos_token_id, None)
    return Packer(params, builder, questions("smoke"))


def _text(ids) -> str:
    return _tokenizer().decode(ids, skip_special_tokens=True)


def test_published_prompts_are_the_card_text_whole_at_every_length_they_fit():
    packer = _packer(protocol="published", answer_tokens=16)
    sizes = {}
    for question in questions("smoke"):
        text = answer_prompt(list(question.documents), question.question)
        sizes[question.question_id] = (_tokenizer()(text, add_special_tokens=False).input_ids, text)
    middle = sorted(len(ids) + 1 for ids, _ in sizes.values())[2]
    for length in (middle, 8192):
        samples = packer.build("aa_lcr", length, 100, 0, length)
        held = {s.detail["question_id"] for s in samples}
        assert held == {q for q, (ids, _) in sizes.items() if len(ids) + 1 <= length}
        for sample in samples:
            ids, _ = sizes[sample.detail["question_id"]]
            assert sample.ids == [_tokenizer().bos_token_id, *ids]  # the card's text, tokenised whole
            assert sample.detail["fillers"] == 0
        assert packer.left_out == 6 - len(held)
    assert packer.left_out == 0  # 8192 holds all six


@pytest.mark.parametrize("length", [2048, 4096])
def test_exact_prompts_hold_their_documents_whole_and_first(length):
    packer = _packer(protocol="exact", lengths=(length,), answer_tokens=64)
    samples = packer.build("aa_lcr", length, 100, 0, length - 64)
    assert len(samples) == 6
    for sample in samples:
        assert len(sample.ids) == length - 64
        (question,) = [q for q in questions("smoke") if q.question_id == sample.detail["question_id"]]
        text = _text(sample.ids)
        places = [text.index(document.strip()[:200]) for document in question.documents]
        assert places == sorted(places)  # in the card's order
        assert text.index("BEGIN DOCUMENT 3:") > places[-1]  # fillers after them
        assert text.rstrip().endswith(f"{question.question}\n\nEND QUESTION")
        assert sample.detail["fillers"] >= 1


def test_a_question_whose_documents_do_not_fit_is_left_out():
    packer = _packer(protocol="exact", answer_tokens=16)
    own = sorted(sum(len(part) for part in packer.own(q)) for q in questions("smoke"))
    with pytest.raises(CocaEvalError, match=f"no AA-LCR question of --data smoke fits length {own[0]}"):
        packer.build("aa_lcr", own[0], 100, 0, own[0] - 1)
    samples = packer.build("aa_lcr", own[3] + 16, 100, 0, own[3])
    assert len(samples) == 4 and packer.left_out == 2
    assert all(len(sample.ids) == own[3] for sample in samples)
