"""The zoo's tokenizer: a small byte-level BPE vocabulary learned from the training books only.

Digits are split one per token, so a five-digit pass key is five tokens whatever the number, and the
retrieval skill the models learn does not depend on which numbers the merges happened to favour.
``<|endoftext|>`` separates documents in the training stream, so it is also the tokenizer's BOS token,
as in GPT-2: not added by default (perplexity windows are read as they were trained, from anywhere in
a document), and put in front of a zoo preset's passkey prompts by ``--bos auto`` (every passkey
example the models trained on followed it; the presets declare it).
"""

from __future__ import annotations

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

EOS = "<|endoftext|>"
PAD = "<|pad|>"


def train_tokenizer(texts: list[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """Learn merges from ``texts`` (in order; the result is deterministic for the same input)."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS, PAD],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=EOS, eos_token=EOS, pad_token=PAD)
