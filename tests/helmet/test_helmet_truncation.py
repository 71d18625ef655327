"""``--protocol helmet``'s cut and text span: a tokenizer without a fast (Rust) backend cuts the context's
end, as the offsets of a fast one do (HELMET's ``tokenize()`` takes its slow path through ``decode``),
and a prompt whose tokenizer adds BOS keeps it out of the text span a text API is sent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from transformers import PreTrainedTokenizer

from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from coca_eval.helmet.truncation import cut_context
from tests.helmet.helmet_files import write_data_dir

sys.path.insert(0, str(Path(__file__).parents[1]))
from tiny_models import make_tokenizer, tiny_corpus_text  # noqa: E402


class _SlowTwin(PreTrainedTokenizer):
    """A Python-backed tokenizer (``is_fast`` false, as HELMET's slow path tests it) whose tokens are a
    fast tokenizer's: it splits and joins through that one's vocabulary, and decodes in Python."""

    def __init__(self, fast, **kwargs):
        self.fast = fast
        self.vocab = fast.get_vocab()
        self.inverse = {i: t for t, i in self.vocab.items()}
        super().__init__(**kwargs)

    def get_vocab(self):
        return dict(self.vocab)

    @property
    def vocab_size(self):
        return len(self.vocab)

    def _tokenize(self, text, **kwargs):
        return self.fast.backend_tokenizer.encode(text, add_special_tokens=False).tokens

    def _convert_token_to_id(self, token):
        return self.vocab[token]

    def _convert_id_to_token(self, index):
        return self.inverse[index]

    def convert_tokens_to_string(self, tokens):
        return self.fast.backend_tokenizer.decoder.decode(tokens)


@pytest.fixture(scope="module")
def twin_tokenizers():
    """One byte-level BPE twice: the fast tokenizer and a slow one on its vocabulary, which tokenise
    every text alike."""
    fast = make_tokenizer(add_bos=False)
    return fast, _SlowTwin(fast, eos_token="</s>")


def test_a_slow_tokenizer_cuts_the_contexts_end_as_a_fast_one(twin_tokenizers):
    fast, slow = twin_tokenizers
    assert not slow.is_fast and fast.is_fast
    context = tiny_corpus_text(1, 300, seed=5)[0]
    ids = fast(context).input_ids
    assert slow(context).input_ids == ids  # the twins agree, so their cuts must too
    for excess in (1, 7, 50, len(ids) // 2):
        cut = cut_context(slow, context, excess)
        assert cut == cut_context(fast, context, excess)
        assert context.startswith(cut) and len(cut) < len(context)  # the beginning kept, the end cut
        assert fast(cut).input_ids == ids[: len(ids) - excess]


@pytest.mark.parametrize("add_bos", [True, False], ids=["bos", "no-bos"])
def test_the_text_span_of_a_helmet_prompt_leaves_out_only_the_tokenizers_bos(add_bos, tmp_path):
    tokenizer = make_tokenizer(add_bos=add_bos)
    data = write_data_dir(tmp_path / "data", 3)
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    bos = tokenizer.bos_token_id if add_bos else None
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, bos, None), "helmet", Sources(str(data), 42, 2), tokenizer, None
    )
    for sample in builder.build("kilt_nq", 8192, 2, 42, 8192 - 20):
        start, end = sample.text_span
        assert end == len(sample.ids)
        assert sample.ids[:start] == ([0] if add_bos else [])  # "<s>", the fixture tokenizer's id 0
        text = tokenizer.decode(sample.ids[start:end])
        assert text.startswith("Use the given documents") and "<s>" not in text
