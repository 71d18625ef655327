"""Greedy decoding: the stop rule, and the shared-prefix fast path against naive per-sample runs."""

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method
from coca_eval.passkey.generation import (
    GreedyDecoder,
    answer_decided,
    decode_prompts,
    first_integer,
    prefix_reuse_is_exact,
)
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.scoring import score_output, wilson_interval
from coca_eval.passkey.task import build_prompts, prompt_builder


def test_stop_rule_and_scoring():
    assert not answer_decided(" 1234")
    assert answer_decided(" 12345.")
    assert not answer_decided(" The pass key")
    assert first_integer("key is 012 and 99") == 12 and first_integer("none") is None
    assert score_output(" 54321. Remember", 54321) == {"correct": True, "substring": True}
    assert score_output(" 1 is not 54321", 54321) == {"correct": False, "substring": True}


def test_wilson_interval_known_values():
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-3) and high == pytest.approx(1.0)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-3) and high == pytest.approx(0.7634, abs=1e-3)


@pytest.mark.parametrize(
    ("rope", "length", "reuse"),
    [("none", 230, True), ("none", 400, True), ("dynamic:2", 230, True), ("dynamic:2", 400, False)],
)
def test_fast_path_equals_naive(tiny_llama_bos_dir, rope, length, reuse):
    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), rope, None, "float32", "hf"))
    params = make_passkey_params({"lengths": [length], "samples": 6, "max_new_tokens": 12})
    prompts = build_prompts(params, prompt_builder(params, backend), length)
    decoder = GreedyDecoder(backend, params.max_new_tokens)
    naive = [decoder.naive(p.ids) for p in prompts]
    assert prefix_reuse_is_exact(backend, length + params.max_new_tokens) is reuse
    fast = {}
    used = decode_prompts(
        decoder, [p.ids for p in prompts], [p.shared_prefix for p in prompts], fast.__setitem__
    )
    assert used is reuse
    assert [fast[i] for i in range(len(prompts))] == naive
    assert all(1 <= len(tokens) <= 12 for tokens in naive)


def test_naive_equals_transformers_generate(tiny_llama_dir):
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    params = make_passkey_params({"lengths": [230], "samples": 3, "max_new_tokens": 10})
    decoder = GreedyDecoder(backend, 10)
    for prompt in build_prompts(params, prompt_builder(params, backend), 230):
        ours = decoder.naive(prompt.ids)
        reference = backend.model.generate(torch.tensor([prompt.ids]), max_new_tokens=10, do_sample=False)
        assert ours == reference[0, 230 : 230 + len(ours)].tolist()
