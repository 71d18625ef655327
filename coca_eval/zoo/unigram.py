"""The floor a language model must clear: a unigram model of the same tokenizer.

A zoo model whose held-out perplexity is not far below this has learned nothing beyond token
frequencies, so the zoo report states both numbers side by side.
"""

from __future__ import annotations

import math
from collections import Counter


def unigram_perplexity(tokenizer, train_texts: list[str], eval_texts: list[str]) -> float:
    """Perplexity on ``eval_texts`` of token frequencies counted on ``train_texts`` (add-one smoothed
    over the whole vocabulary, so a token never seen in training still has a probability)."""
    counts = Counter()
    for text in train_texts:
        counts.update(tokenizer(text)["input_ids"])
    total, vocab = sum(counts.values()), len(tokenizer)
    nll, n = 0.0, 0
    for text in eval_texts:
        ids = tokenizer(text)["input_ids"]
        nll -= sum(math.log((counts[i] + 1) / (total + vocab)) for i in ids)
        n += len(ids)
    return math.exp(nll / n)


def main() -> None:
    """Print the unigram floor of the shipped zoo tokenizer on the held-out and outside books."""
    from transformers import AutoTokenizer

    from coca_eval.zoo.catalog import shipped_dir
    from coca_eval.zoo.corpus import load_split

    model_dir = shipped_dir("zoo-rope")
    if model_dir is None:
        raise SystemExit("zoo-rope ships no trained weights (and so no tokenizer) in this install")
    tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
    train = [d.text for d in load_split("train")]
    for split in ("heldout", "outside"):
        ppl = unigram_perplexity(tokenizer, train, [d.text for d in load_split(split)])
        print(f"unigram perplexity, zoo:{split}: {ppl:.1f}")


if __name__ == "__main__":
    main()
