"""Greedy decoding on the hf backend: the shared-prefix fast path against naive per-sample runs, and
naive runs against transformers' own ``generate``."""

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts, prefix_reuse_is_exact
from coca_eval.methods import make_method
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.task import build_prompts, prompt_builder


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


def test_no_prompts_is_nothing_to_decode(tiny_llama_dir):
    """A resumed passkey cell with every sample journaled asks for nothing (it used to raise)."""
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    decoder = GreedyDecoder(backend, 4)
    assert decode_prompts(decoder, [], [], lambda i, tokens: pytest.fail("nothing to decode")) is False
