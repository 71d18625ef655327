"""Tiny random LLaMA models with trained byte-level BPE tokenizers, saved like any checkpoint."""

from __future__ import annotations

import random
import string
from pathlib import Path

WORDS = (  # noqa: SIM905 (a word list reads better as one string)
    "the of and to in a was he that it his her with as had for she you not on be at by i which have "
    "or from this him but all they were my are me one their so an said them we who would been will "
    "no when there if more out up into do any your what has man could other than our some very time "
    "upon about may its only now like little then can should made did us such great before must two"
).split()


def tiny_corpus_text(n_docs: int = 6, words_per_doc: int = 1500, seed: int = 0) -> list[str]:
    """Deterministic pseudo-English documents long enough for multi-window plans."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        sentences = []
        while sum(len(s.split()) for s in sentences) < words_per_doc:
            words = rng.choices(WORDS, k=rng.randint(5, 14))
            sentences.append(" ".join(words).capitalize() + ".")
        docs.append(" ".join(sentences))
    return docs


def make_tokenizer(add_bos: bool):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(tiny_corpus_text(n_docs=2, seed=1), trainer=trainer)
    if add_bos:
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")


def make_tiny_llama(
    directory: Path, add_bos: bool, seed: int = 0, config_class=None, model_class=None, **overrides
) -> Path:
    """Save a 2-layer LLaMA (GQA, head_dim 16) and its tokenizer to ``directory``; ``config_class`` and
    ``model_class`` put a LLaMA-shaped variant (p-RoPE, ALiBi) in its place."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = make_tokenizer(add_bos)
    settings = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=0,
        eos_token_id=1,
        tie_word_embeddings=False,
    )
    settings.update(overrides)
    torch.manual_seed(seed)
    model = (model_class or LlamaForCausalLM)((config_class or LlamaConfig)(**settings))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return Path(directory)


def sharpen_attention(model, std: float = 0.15):
    """Redraw the q/k/v projections at ``std``: at the default 0.02 attention is nearly uniform, and a
    position scheme that did nothing could still pass a test."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            if any(p in name for p in ("q_proj", "k_proj", "v_proj")):
                param.normal_(0.0, std)
    return model


def make_sharp_llama(directory: Path) -> Path:
    """The tiny BOS LLaMA with attention sharp enough to feel its rotary scaling and a head with clear
    greedy winners: at the default initialisation holding and rescaling dynamic rope give the same
    tokens, so a lost hold would go unseen."""
    import torch
    from transformers import AutoModelForCausalLM

    make_tiny_llama(directory, add_bos=True)
    model = sharpen_attention(AutoModelForCausalLM.from_pretrained(directory), std=0.3)
    with torch.no_grad():
        model.get_output_embeddings().weight.normal_(0.0, 0.5)
    model.save_pretrained(directory)
    return Path(directory)


def make_tiny_gemma3(directory: Path, seed: int = 0, **overrides) -> Path:
    """Save a 3-layer Gemma 3 (sliding, sliding, global; GQA; final-logit softcapping) and a tokenizer."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    tokenizer = make_tokenizer(add_bos=True)
    settings = dict(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, final_logit_softcapping=5.0,
        sliding_window=16, layer_types=["sliding_attention", "sliding_attention", "full_attention"],
        query_pre_attn_scalar=24, bos_token_id=0, eos_token_id=1, pad_token_id=1,
    )  # fmt: skip
    settings.update(overrides)
    torch.manual_seed(seed)
    Gemma3ForCausalLM(Gemma3TextConfig(**settings)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return Path(directory)


def make_sentencepiece_like_tokenizer():
    """A Metaspace (SentencePiece-style, dummy-prefix) BPE tokenizer that puts BOS in front, like LLaMA."""
    from tokenizers import SentencePieceBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    tok = SentencePieceBPETokenizer()
    tok.train_from_iterator(
        tiny_corpus_text(n_docs=2, seed=2),
        vocab_size=400,
        special_tokens=["<s>", "</s>", "<unk>"],
        initial_alphabet=list(string.ascii_letters + string.digits + string.punctuation),
    )
    tok = tok._tokenizer
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def make_tiny_coca(directory: Path, kind: str = "llama", seed: int = 0, head_std: float = 0.5, **overrides):
    """Save a 2-layer CoCA decoder (LLaMA with GQA, or GPT-NeoX with partial rotary) and a tokenizer.

    The LM head is drawn at ``head_std`` so that greedy decoding has clear winners: with the default
    0.02 the top two logits of a random model are often within 1e-4 of each other, and a comparison of
    generations across devices would hinge on float rounding rather than on the code under test.
    """
    import torch

    from coca_eval.models.coca import (
        CocaLlamaConfig,
        CocaLlamaForCausalLM,
        CocaNeoXConfig,
        CocaNeoXForCausalLM,
    )

    tokenizer = make_tokenizer(add_bos=False)
    settings = dict(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=256, bos_token_id=0, eos_token_id=1,
        tie_word_embeddings=False,
    )  # fmt: skip
    if kind == "llama":
        settings.update(num_key_value_heads=2)
        config_class, model_class = CocaLlamaConfig, CocaLlamaForCausalLM
    else:
        settings.update(rotary_pct=0.5)
        config_class, model_class = CocaNeoXConfig, CocaNeoXForCausalLM
    settings.update(overrides)
    torch.manual_seed(seed)
    model = model_class(config_class(**settings))
    with torch.no_grad():
        model.get_output_embeddings().weight.normal_(0.0, head_std)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return Path(directory)
