"""The zoo tokenizer: digits one per token, and <|endoftext|> as separator and (not added) BOS."""

from __future__ import annotations

from tiny_models import tiny_corpus_text

from coca_eval.zoo.tokenizer import EOS, train_tokenizer


def test_digits_are_single_tokens_and_the_separator_is_the_unadded_bos():
    tokenizer = train_tokenizer(tiny_corpus_text(n_docs=2, seed=4), 300)
    ids = tokenizer("key 90210.", add_special_tokens=False)["input_ids"]
    digits = [tokenizer.decode([i]) for i in ids if tokenizer.decode([i]).strip().isdigit()]
    assert digits == list("90210")
    assert tokenizer.bos_token == tokenizer.eos_token == EOS
    assert tokenizer("key 90210.")["input_ids"] == ids  # nothing added in front or behind by default
