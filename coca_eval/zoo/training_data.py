"""The zoo's data in one object: the tokenizer learned from the training books, and the texts by split."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from coca_eval.zoo.corpus import SPLIT_BOOKS, load_split
from coca_eval.zoo.tokenizer import train_tokenizer


@dataclass
class ZooData:
    tokenizer: object  # PreTrainedTokenizerFast
    train_texts: list[str]
    heldout_texts: list[str]
    book_hashes: dict[str, str]  # doc_id -> sha256 of the normalised text, for every book used
    extra_books: bool = False  # whether the train-extra books are training text too

    @classmethod
    def load(cls, vocab_size: int, extra_books: bool = False) -> ZooData:
        """Fetch (or read the cache of) the training and held-out books and learn the tokenizer from
        the training books (with ``extra_books``, the train-extra ones as well)."""
        train = load_split("train") + (load_split("train-extra") if extra_books else [])
        heldout = load_split("heldout")
        hashes = {d.doc_id: d.source["text_sha256"] for d in train + heldout}
        tokenizer = train_tokenizer([d.text for d in train], vocab_size)
        return cls(tokenizer, [d.text for d in train], [d.text for d in heldout], hashes, extra_books)

    def heldout_windows(self, recipe):
        """The fixed held-out windows every zoo model's held-out loss is measured on."""
        from coca_eval.zoo.batches import heldout_windows

        return heldout_windows(self.tokenizer, self.heldout_texts, recipe.eval_windows, recipe.context)

    @property
    def tokenizer_sha256(self) -> str:
        return hashlib.sha256(self.tokenizer.backend_tokenizer.to_str().encode("utf-8")).hexdigest()

    @property
    def splits(self) -> dict[str, list[str]]:
        """The books by the role they played: training (train-extra folded in when used) and evaluation."""
        train = [*SPLIT_BOOKS["train"], *(SPLIT_BOOKS["train-extra"] if self.extra_books else ())]
        evaluation = {split: list(SPLIT_BOOKS[split]) for split in ("heldout", "outside")}
        return {"train": train, **evaluation}
