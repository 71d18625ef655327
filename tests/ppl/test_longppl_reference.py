"""LongPPL equals the reference implementation (the ``longppl`` package, 0.3.0) on tiny models.

The package is not a dependency: install it with ``pip install 'coca-eval[longppl]'``, or into a folder
named by ``COCA_EVAL_LONGPPL_SITE`` (default ``/tmp/lpsite``: ``pip install --target /tmp/lpsite
--no-deps longppl==0.3.0``). Without it these tests skip, saying so.

Random tiny models predict no token with a loss below the paper's 2 nats, so the tests raise the bound
and lower the margin until some tokens (not all) are key: the rule, not its constants, is under test.
"""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest
import torch
from tiny_models import make_sentencepiece_like_tokenizer, sharpen_attention, tiny_corpus_text

from coca_eval.backends.hf import HFBackend
from coca_eval.ppl.longppl.keys import KeyTokenRule, find_key_spans, longppl, score_on_spans

SITE = os.environ.get("COCA_EVAL_LONGPPL_SITE", "/tmp/lpsite")


def _reference():
    if os.path.isdir(SITE) and SITE not in sys.path:
        sys.path.append(SITE)
    try:
        return importlib.import_module("longppl.longppl")
    except ImportError as exc:
        if "COCA_EVAL_LONGPPL_SITE" in os.environ:  # CI names a site it installed: missing is a failure
            pytest.fail(f"longppl 0.3.0 is not importable from COCA_EVAL_LONGPPL_SITE={SITE} ({exc})")
        pytest.skip(
            f"the reference package longppl 0.3.0 is not importable ({exc}); see this module's docstring"
        )


RULE = KeyTokenRule(short=24, step=10, bound=5.9, margin=0.02)


def _backend(model, tokenizer) -> HFBackend:
    return HFBackend(model, tokenizer, "tiny", 256)


@pytest.fixture(scope="module")
def byte_level(tiny_llama_dir):
    """The tiny LLaMA (byte-level BPE, no BOS), its attention sharpened so context matters."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32).eval()
    return sharpen_attention(model, 0.3), AutoTokenizer.from_pretrained(tiny_llama_dir)


@pytest.fixture(scope="module")
def metaspace():
    """A second tiny LLaMA with another tokenizer (SentencePiece-like, BOS in front)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = make_sentencepiece_like_tokenizer()
    torch.manual_seed(1)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, bos_token_id=0,
        eos_token_id=1,
    )  # fmt: skip
    return sharpen_attention(LlamaForCausalLM(config).eval(), 0.3), tokenizer


@pytest.fixture(scope="module")
def text() -> str:
    """Token counts (166 and 74) chosen so no short window predicts a single token: the reference
    fails on one (it iterates over a squeezed 0-d tensor)."""
    return tiny_corpus_text(n_docs=1, words_per_doc=60, seed=5)[0]


def _reference_run(ref, text, model, tokenizer, evaluator, evaluator_tokenizer):
    spans = ref.find_key_token(
        text, evaluator, evaluator_tokenizer, RULE.short, RULE.step, alpha=RULE.margin, beta=-RULE.bound
    )
    out = ref.compute_longppl(
        text, model, evaluator, tokenizer, evaluator_tokenizer,
        trunc_len=RULE.short, sliding_window=RULE.step, alpha=RULE.margin, beta=-RULE.bound,
    )  # fmt: skip
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    keys = [k + 1 for k in ref.cal_overlap(offsets, [list(s) for s in spans.tolist()])]  # token indices
    return [tuple(s) for s in spans.tolist()], keys, out


def _assert_equal(ref_run, spans, score, n_evaluator_tokens):
    ref_spans, ref_keys, out = ref_run
    assert spans and sum(e - s for s, e in spans) > 0
    assert spans == ref_spans
    assert score.key_positions == ref_keys
    assert 0 < score.key_tokens < n_evaluator_tokens - RULE.short  # some tokens key, not all candidates
    assert score.key_tokens == out["n_key_token"]
    assert score.longppl == pytest.approx(float(out["longppl"]), rel=1e-5)
    assert score.ppl == pytest.approx(float(out["ppl"]), rel=1e-5)
    assert score.tokens + 1 == out["n_token"]


def test_self_evaluated_longppl_equals_the_reference(byte_level, text):
    ref = _reference()
    model, tokenizer = byte_level
    backend = _backend(model, tokenizer)
    spans, score = longppl(backend, text, rule=RULE)
    n = len(tokenizer(text).input_ids)
    _assert_equal(_reference_run(ref, text, model, tokenizer, model, tokenizer), spans, score, n)


@pytest.mark.parametrize("direction", ["metaspace judges byte-level", "byte-level judges metaspace"])
def test_another_evaluator_with_another_tokenizer_equals_the_reference(
    byte_level, metaspace, text, direction
):
    ref = _reference()
    (model, tokenizer), (evaluator, evaluator_tokenizer) = byte_level, metaspace
    if direction.startswith("byte"):
        (model, tokenizer), (evaluator, evaluator_tokenizer) = metaspace, byte_level
    assert tokenizer(text).input_ids != evaluator_tokenizer(text).input_ids
    # the reference tokenizes the evaluator's text with its special tokens (BOS for the metaspace one)
    evaluator_bos = evaluator_tokenizer("a").input_ids[0] == evaluator_tokenizer.bos_token_id
    spans, score = longppl(
        _backend(model, tokenizer),
        text,
        _backend(evaluator, evaluator_tokenizer),
        RULE,
        evaluator_bos=evaluator_bos,
    )
    n = len(evaluator_tokenizer(text).input_ids)
    _assert_equal(
        _reference_run(ref, text, model, tokenizer, evaluator, evaluator_tokenizer), spans, score, n
    )


def test_key_spans_score_a_second_model_as_the_reference_does(byte_level, metaspace, text):
    """The paper's protocol: the key tokens found once score any model (the reference's saved file)."""
    ref = _reference()
    (model, tokenizer), (other, other_tokenizer) = byte_level, metaspace
    spans = find_key_spans(_backend(model, tokenizer), text, RULE)
    score = score_on_spans(_backend(other, other_tokenizer), text, spans)
    offsets = other_tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    ref_keys = ref.cal_overlap(offsets, [list(s) for s in spans])
    assert score.key_positions == [k + 1 for k in ref_keys] and ref_keys
    with torch.no_grad():
        ids = other_tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
        logits = other(ids).logits[0, :-1]
    losses = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none").numpy()
    assert score.longppl == pytest.approx(float(np.exp(losses[ref_keys].mean())), rel=1e-5)


def test_the_default_rule_is_the_reference_default():
    """The paper's constants: short context 4096, step 1024, full-context loss below 2 (beta = -2) that
    rises by more than 2 (alpha = 2) with the short context."""
    import inspect

    defaults = {
        name: p.default for name, p in inspect.signature(_reference().compute_longppl).parameters.items()
    }
    rule = KeyTokenRule()
    assert (rule.short, rule.step) == (defaults["trunc_len"], defaults["sliding_window"])
    assert (rule.margin, rule.bound) == (defaults["alpha"], -defaults["beta"])
