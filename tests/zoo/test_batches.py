"""Training batches: a pure function of (seed, step), with passkey examples inside the context."""

from __future__ import annotations

import re

import pytest
import torch
from zoo_fixtures import micro_data

from coca_eval.zoo.batches import TrainingStream, heldout_windows
from coca_eval.zoo.recipe import Recipe


@pytest.fixture(scope="module")
def data():
    return micro_data()


def test_batches_depend_only_on_seed_and_step(data):
    recipe = Recipe(context=512, batch_size=4, passkey_fraction=0.5)
    a = TrainingStream(recipe, data.tokenizer, data.train_texts)
    b = TrainingStream(recipe, data.tokenizer, data.train_texts)
    assert torch.equal(a.batch(7), b.batch(7))
    assert not torch.equal(a.batch(7), a.batch(8))
    assert a.batch(3).shape == (4, 513)


def test_passkey_rows_are_packed_with_answered_examples(data):
    recipe = Recipe(context=512, batch_size=8, passkey_fraction=1.0, copy_fraction=0.0, copy_warmup_steps=0)
    stream = TrainingStream(recipe, data.tokenizer, data.train_texts)
    counts = []
    for row in stream.batch(0):
        assert row[-1].item() == data.tokenizer.eos_token_id
        pieces = data.tokenizer.decode(row).split("<|endoftext|>")[1:-1]
        examples = [p for p in pieces if "pass key" in p]
        for example in examples:
            keys = re.findall(r"The pass key is (\d{5})\.", example)
            answer = re.search(r"What is the pass key\? The pass key is (\d{5})\.$", example)
            assert answer and keys and set(keys) == {answer.group(1)}
            assert len(data.tokenizer(example)["input_ids"]) <= recipe.context
        counts.append(len(examples))
    assert min(counts) >= 1 and sum(counts) > len(counts)  # several answers per row on average


def test_copy_rows_end_in_a_repeat_of_an_earlier_segment(data):
    recipe = Recipe(context=512, batch_size=8, passkey_fraction=0.0, copy_fraction=1.0)
    for row in TrainingStream(recipe, data.tokenizer, data.train_texts).batch(0).tolist():
        assert len(row) == 513
        tail = row[-16:]
        assert any(row[i : i + 16] == tail for i in range(len(row) - 16))


def test_fractions_beyond_one_are_refused():
    with pytest.raises(ValueError, match="at most 1"):
        Recipe(passkey_fraction=0.8, copy_fraction=0.3)


def test_no_passkey_rows_when_the_fraction_is_zero(data):
    stream = TrainingStream(
        Recipe(context=256, batch_size=8, passkey_fraction=0.0), data.tokenizer, data.train_texts
    )
    assert "pass key" not in data.tokenizer.decode(stream.batch(0).flatten())


def test_digits_are_single_tokens(data):
    tokens = data.tokenizer.tokenize(" 12345")
    assert [t for t in tokens if t.isdigit()] == list("12345")


def test_heldout_windows_come_from_the_heldout_texts(data):
    windows = heldout_windows(data.tokenizer, data.heldout_texts, 4, 16)
    assert windows.shape == (4, 17)
    first = data.tokenizer(data.heldout_texts[0])["input_ids"][:17]
    assert windows[0].tolist() == first


def test_a_context_too_short_for_any_passkey_example_is_refused(data):
    from coca_eval.errors import CocaEvalError

    with pytest.raises(CocaEvalError, match="cannot hold a passkey example"):
        TrainingStream(Recipe(context=64, passkey_fraction=0.5), data.tokenizer, data.train_texts)


def test_unigram_perplexity_matches_its_definition():
    from coca_eval.zoo.unigram import unigram_perplexity

    class Chars:  # a tokenizer of single characters over a four-letter vocabulary
        def __call__(self, text):
            return {"input_ids": ["abcd".index(c) for c in text]}

        def __len__(self):
            return 4

    # counts a:3 b:1 (c, d unseen) -> add-one probabilities 4/8, 2/8, 1/8, 1/8
    value = unigram_perplexity(Chars(), ["aaab"], ["ab"])
    assert value == pytest.approx(1 / ((4 / 8) * (2 / 8)) ** 0.5)


def test_the_first_steps_are_copy_rows_only(data):
    recipe = Recipe(context=512, batch_size=8, passkey_fraction=0.0, copy_fraction=0.0, copy_warmup_steps=3)
    stream = TrainingStream(recipe, data.tokenizer, data.train_texts)
    for row in stream.batch(2).tolist():
        assert any(row[i : i + 16] == row[-16:] for i in range(len(row) - 16))
    tokens = stream.tokens.tolist()
    for row in stream.batch(3).tolist():  # after the warm-up: plain book windows (both fractions are 0)
        assert any(tokens[i : i + 513] == row for i in range(len(tokens) - 512))
