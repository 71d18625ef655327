"""The engine against the peers' definitions on a tiny random model."""

import math

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from coca_eval.backends.hf import HFBackend
from coca_eval.ppl.engine import score_tokens
from coca_eval.ppl.reference import brute_force_nll, hf_guide_loop, lm_eval_rolling_nll
from coca_eval.ppl.windows import plan_windows


@pytest.fixture(scope="module")
def backend(tiny_llama_bos_dir):
    from transformers import AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_bos_dir, dtype=torch.float32).eval()
    return HFBackend(model, AutoTokenizer.from_pretrained(tiny_llama_bos_dir), "tiny", 256)


@pytest.fixture(scope="module")
def ids(backend, corpus_file):
    import json

    text = json.loads(corpus_file.read_text().splitlines()[0])["text"]
    return backend.encode(text)[:67]


@pytest.mark.parametrize(
    ("length", "stride", "policy"),
    [
        (16, 4, "never"),
        (16, 4, "always"),
        (16, 5, "first"),
        (12, 12, "never"),
        (12, 12, "always"),
        (12, 12, "first"),
        (9, 1, "always"),
        (32, 31, "never"),
    ],
)
def test_engine_equals_brute_force(backend, ids, length, stride, policy):
    plan = plan_windows(len(ids), length, stride, policy)
    ours = score_tokens(backend, ids, plan, batch_size=3)
    brute = brute_force_nll(backend.model, ids, length, stride, policy, backend.bos_token_id)
    np.testing.assert_array_equal(ours.scored, ~np.isnan(brute))
    np.testing.assert_allclose(ours.values, brute[~np.isnan(brute)], rtol=1e-5, atol=1e-5)


def test_disjoint_equals_lm_eval_rolling(backend, ids):
    length = 16
    ours = score_tokens(backend, ids, plan_windows(len(ids), length, length, "first"))
    peer = lm_eval_rolling_nll(backend.model, ids, backend.bos_token_id, length)
    assert ours.scored.all()
    np.testing.assert_allclose(ours.nll, peer, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("length", "stride"), [(16, 4), (20, 7)])
def test_strided_equals_hf_guide_definition(backend, ids, length, stride):
    ours = score_tokens(backend, ids, plan_windows(len(ids), length, stride, "never"))
    guide_ppl, exact_ppl, n_scored = hf_guide_loop(backend.model, ids, length, stride)
    assert n_scored == np.count_nonzero(ours.scored) == len(ids) - 1
    assert math.exp(np.mean(ours.values)) == pytest.approx(exact_ppl, rel=1e-6)
    # the guide's own number weights later windows by (scored - 1): close, not equal
    assert guide_ppl == pytest.approx(exact_ppl, rel=2e-2)


@pytest.mark.parametrize(
    ("length", "stride", "policy"), [(16, 4, "always"), (16, 16, "never"), (24, 8, "first")]
)
def test_batch_size_changes_nothing(backend, ids, length, stride, policy):
    plan = plan_windows(len(ids), length, stride, policy)
    single = score_tokens(backend, ids, plan, batch_size=1)
    batched = score_tokens(backend, ids, plan, batch_size=8)
    np.testing.assert_array_equal(batched.scored, single.scored)
    np.testing.assert_allclose(batched.values, single.values, rtol=0, atol=1e-5)
