"""Passkey prompts: exact lengths, one key line at the requested depth, seeded and independent draws."""

import pytest
from tiny_models import make_sentencepiece_like_tokenizer, make_tokenizer

from coca_eval.errors import CocaEvalError
from coca_eval.passkey.prompts import PromptBuilder, draw_samples, parse_depths
from coca_eval.passkey.templates import TEMPLATES

TOKENIZERS = {
    "byte-bpe-no-bos": lambda: (make_tokenizer(add_bos=False), False),
    "byte-bpe-bos": lambda: (make_tokenizer(add_bos=True), True),
    "sentencepiece-bos": lambda: (make_sentencepiece_like_tokenizer(), True),
}


def builder_for(name, template="landmark"):
    tokenizer, with_bos = TOKENIZERS[name]()
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    return tokenizer, PromptBuilder(
        TEMPLATES.get(template), encode, tokenizer.bos_token_id if with_bos else None
    )


@pytest.mark.parametrize("name", TOKENIZERS)
@pytest.mark.parametrize("template", ["landmark", "coca"])
def test_prompts_are_exact_length_with_one_key_at_depth(name, template):
    tokenizer, builder = builder_for(name, template)
    sentence_tokens = max(len(s) for s in builder.sentences)
    for length in (300, 512, 1000):
        for sample in draw_samples(seed=7, length=length, count=12, depths="stratified"):
            prompt = builder.build(sample, length)
            assert len(prompt.ids) == length
            assert (prompt.ids[0] == tokenizer.bos_token_id) == (builder.bos != [])
            text = tokenizer.decode(prompt.ids, skip_special_tokens=True)
            key_line = TEMPLATES.get(template).key_text(sample.key)
            assert text.count(key_line) == 1 and text.count(str(sample.key)) == 2
            assert tokenizer.decode(prompt.ids[prompt.key_start : prompt.key_end]).strip() == key_line
            n_filler = length - len(builder.bos) - len(builder.intro) - (prompt.key_end - prompt.key_start)
            n_filler -= len(builder.question)
            offset = prompt.key_start - len(builder.bos) - len(builder.intro)
            assert abs(offset - sample.depth * n_filler) <= sentence_tokens  # within one filler sentence
            assert text.rstrip().endswith(TEMPLATES.get(template).question)


def test_same_seed_same_samples_lengths_independent():
    first = draw_samples(seed=1, length=1024, count=50, depths="stratified")
    assert first == draw_samples(seed=1, length=1024, count=50, depths="stratified")
    other_length = draw_samples(seed=1, length=2048, count=50, depths="stratified")
    assert sum(a.key == b.key for a, b in zip(first, other_length, strict=True)) <= 1
    assert draw_samples(seed=2, length=1024, count=50, depths="stratified") != first
    assert all(10000 <= s.key <= 99999 for s in first)
    # stratified: sample i lies in the i-th of n equal bins
    assert all(i / 50 <= s.depth < (i + 1) / 50 for i, s in enumerate(first))


def test_depth_grids_and_errors():
    grid = parse_depths("0,0.5,1")
    samples = draw_samples(0, 512, 6, grid)
    assert [s.depth for s in samples] == [0, 0.5, 1, 0, 0.5, 1]
    for bad in ("2", "a,b", "-0.1"):
        with pytest.raises(CocaEvalError):
            parse_depths(bad)
    _, builder = builder_for("byte-bpe-no-bos")
    with pytest.raises(CocaEvalError, match="too short"):
        builder.build(samples[0], 40)
    start = builder.build(samples[0], 512)  # depth 0: key line right after the intro
    assert start.key_start == len(builder.bos) + len(builder.intro)
    end = builder.build(samples[2], 512)  # depth 1: at most one filler sentence before the question
    assert 0 <= len(end.ids) - len(builder.question) - end.key_end <= max(map(len, builder.sentences))
