"""Greedy decoding on the hf backend: the shared-prefix fast path against naive per-sample runs, and
naive runs against transformers' own ``generate``."""

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts, prefix_reuse_is_exact
from coca_eval.methods import make_method
from coca_eval.models.layer_cache import cache_keyword, returned_cache
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.task import build_prompts, prompt_builder
from tests.tiny_models import make_tiny_coca


@pytest.fixture(scope="module")
def tiny_coca_dir(tmp_path_factory):
    return make_tiny_coca(tmp_path_factory.mktemp("tiny-coca"), "llama")


def _assert_fast_path_equals_naive(model_dir, rope: str, length: int, hold: bool = False) -> None:
    """Six samples at ``length`` (stratified depths, so some keys sit before position 256, the trained
    length, and some after): the shared-prefix route returns the naive route's tokens."""
    backend = load_hf_backend(make_method(str(model_dir), rope, None, "float32", "hf"))
    params = make_passkey_params({"lengths": [length], "samples": 6, "max_new_tokens": 12})
    prompts = build_prompts(params, prompt_builder(params, backend), length)
    decoder = GreedyDecoder(backend, params.max_new_tokens, hold_dynamic_rope=hold)
    naive = [decoder.naive(p.ids) for p in prompts]
    assert prefix_reuse_is_exact(backend, [p.ids for p in prompts])
    fast = {}
    used = decode_prompts(
        decoder, [p.ids for p in prompts], [p.shared_prefix for p in prompts], fast.__setitem__
    )
    assert used
    assert [fast[i] for i in range(len(prompts))] == naive
    assert all(1 <= len(tokens) <= 12 for tokens in naive)


@pytest.mark.parametrize(
    ("rope", "length"), [("none", 230), ("none", 400), ("dynamic:2", 230), ("dynamic:2", 400)]
)
@pytest.mark.usefixtures("prefix_route_always")
def test_fast_path_equals_naive(tiny_llama_bos_dir, rope, length):
    _assert_fast_path_equals_naive(tiny_llama_bos_dir, rope, length)


@pytest.mark.parametrize("length", [230, 400])
@pytest.mark.usefixtures("prefix_route_always")
def test_fast_path_equals_naive_with_the_scaling_held_through_the_answer(tiny_llama_bos_dir, length):
    _assert_fast_path_equals_naive(tiny_llama_bos_dir, "dynamic:2", length, hold=True)


@pytest.mark.parametrize("rope", ["dynamic:4", "none"])
@pytest.mark.usefixtures("prefix_route_always")
def test_fast_path_equals_naive_on_coca(tiny_coca_dir, rope):
    _assert_fast_path_equals_naive(tiny_coca_dir, rope, 400)


def _last_logits(backend, pieces) -> torch.Tensor:
    cache, keyword = None, cache_keyword(backend.model)
    for piece in pieces:
        out = backend.model(input_ids=torch.tensor([piece]), use_cache=True, **{keyword: cache})
        cache = returned_cache(out)
    return out.logits[0, -1]  # (vocab,)


@torch.inference_mode()
def test_coca_prefilled_in_held_pieces_equals_one_forward(tiny_coca_dir):
    """CoCA reads the same rotary tables: pieces prefilled under the hold give the whole prompt's
    logits, and the same pieces without it do not (a first piece shorter than the trained 256). The
    random model's attention is nearly uniform, so the gap is small, but far above float rounding."""
    backend = load_hf_backend(make_method(str(tiny_coca_dir), "dynamic:4", None, "float32", "hf"))
    ids = [(7 * i) % 50 + 3 for i in range(400)]
    backend.reset_dynamic_rope()
    whole = _last_logits(backend, [ids])
    with backend.dynamic_rope_held_at(400):
        held = _last_logits(backend, [ids[:100], ids[100:]])
    backend.reset_dynamic_rope()
    loose = _last_logits(backend, [ids[:100], ids[100:]])
    held_error, loose_error = (held - whole).abs().max(), (loose - whole).abs().max()
    assert held_error < 2e-5
    assert loose_error > 10 * held_error


def test_dynamic_rope_needs_one_length(tiny_llama_bos_dir):
    """A dynamic table's scaling is the whole prompt's: prompts of different lengths decode naively."""
    dynamic = load_hf_backend(make_method(str(tiny_llama_bos_dir), "dynamic:2", None, "float32", "hf"))
    static = load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))
    mixed, equal = [[5] * 300, [5] * 301], [[5] * 300, [6] * 300]
    assert not prefix_reuse_is_exact(dynamic, mixed)
    assert prefix_reuse_is_exact(dynamic, equal)
    assert prefix_reuse_is_exact(static, mixed)


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
