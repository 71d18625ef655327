"""Which rows take the shared-prefix route: the FLOP estimate read off a model, the choice it makes on
RULER-shaped prompts of SmolLM2-135M, and rows split between the two routes answering as batch 1."""

import contextlib
import os

import pytest
import torch

from coca_eval.backends import hf_generation, prefix_route
from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts
from coca_eval.backends.prefix_route import MASKED_PAIR_COST, PrefillCost, rows_reusing
from coca_eval.methods import make_method
from tests.backends.shared_prefix_prompts import prompts_sharing_prefix


def _smollm2_cost() -> PrefillCost:
    """SmolLM2-135M's shape (30 layers, 9 heads of 64, 3 KV heads, MLP 1536), built without weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=49152,
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        tie_word_embeddings=True,
    )
    with torch.device("meta"):
        return PrefillCost.of(LlamaForCausalLM(config))


def test_the_estimate_counts_weights_outside_the_embeddings_and_attention_per_pair(tiny_llama_dir):
    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    config = backend.model.config
    h, heads, layers = config.hidden_size, config.num_attention_heads, config.num_hidden_layers
    head_dim = getattr(config, "head_dim", None) or h // heads
    kv = config.num_key_value_heads * head_dim
    per_layer = 2 * h * heads * head_dim + 2 * h * kv + 3 * h * config.intermediate_size + 2 * h
    cost = PrefillCost.of(backend.model)
    assert cost.per_token == 2 * (layers * per_layer + h)
    assert cost.per_pair == 4 * layers * heads * head_dim


def test_smollm2s_estimate_is_its_known_size():
    """About 106M weights outside the embeddings; 69,120 FLOPs per attention pair."""
    cost = _smollm2_cost()
    assert cost.per_pair == 4 * 30 * 9 * 64
    assert 2 * 105e6 < cost.per_token < 2 * 107e6


def test_a_configuration_without_layers_and_heads_gives_no_estimate(tiny_llama_dir):
    """A plug-in's configuration may name them otherwise: its rows reuse their prefix, as always."""
    from transformers import PretrainedConfig

    backend = load_hf_backend(make_method(str(tiny_llama_dir), "none", None, "float32", "hf"))
    backend.model.config = PretrainedConfig(hidden_size=64)
    assert PrefillCost.of(backend.model) is None


def test_a_rest_is_prefilled_in_chunks_each_masked_up_to_its_last_key():
    cost = PrefillCost(per_token=1.0, per_pair=1.0)
    chunk = prefix_route.REST_CHUNK
    assert cost.whole(4) == 4 + 10
    # a rest of two chunks and a bit past a cached prefix of 100
    length = 100 + 2 * chunk + 5
    pairs = chunk * (100 + chunk) + chunk * (100 + 2 * chunk) + 5 * length
    assert cost.rest(length, 100) == pytest.approx(2 * chunk + 5 + MASKED_PAIR_COST * pairs)


def test_a_short_prefix_at_8k_prefills_whole_rows():
    """RULER's variable tracking at 8k: ten prompts sharing only their first 60 tokens."""
    assert rows_reusing(_smollm2_cost(), [8162] * 10, [60] * 10, [0] * 10) == [False] * 10


def test_needles_deep_enough_reuse_the_haystack_and_shallow_ones_do_not():
    """NIAH at 8k and 1k: the haystack up to the needle is shared, at depths from 5 to 95 %."""
    cost = _smollm2_cost()
    shallow = {8064: 3, 960: 2}  # needles at 5, 15 (and 25) % prefill whole
    for length, whole in shallow.items():
        prefixes = [int(length * depth / 100) for depth in range(5, 100, 10)]
        chosen = rows_reusing(cost, [length] * 10, prefixes, [0] * 10)
        assert chosen == [False] * whole + [True] * (10 - whole), length


def test_each_group_pays_for_its_own_prefix():
    """A lone row saves nothing (its prefix is prefilled once either way); two groups choose apart."""
    cost = _smollm2_cost()
    assert rows_reusing(cost, [4096], [4000], [0]) == [False]
    lengths, prefixes = [4096] * 6, [3900, 3800, 3700, 50, 40, 30]
    assert rows_reusing(cost, lengths, prefixes, [0, 0, 0, 1, 1, 1]) == [True] * 3 + [False] * 3


@pytest.mark.parametrize(("prefix", "reuse"), [(65, False), (70, True)])
def test_a_group_reuses_its_prefix_only_where_its_rows_save_more_than_the_prefix_costs(
    monkeypatch, prefix, reuse
):
    """Attention alone (one FLOP a pair), two rows of 100 tokens sharing ``prefix``, rests of one chunk:
    prefilling a row whole costs 100 * 101 / 2 = 5050, its rest 1.2 * (100 - prefix) * 100, so each row
    saves 120 * prefix - 6950. At 65 the two save 1700, less than the prefix's 65 * 66 / 2 = 2145; at
    70 they save 2900, more than its 2485."""
    monkeypatch.setattr(prefix_route, "MASKED_PAIR_COST", 1.2)
    cost = PrefillCost(per_token=0.0, per_pair=1.0)
    assert rows_reusing(cost, [100, 100], [prefix, prefix], [0, 0]) == [reuse, reuse]


@pytest.mark.parametrize(("rope", "hold"), [("none", False), ("dynamic:2", False), ("dynamic:2", True)])
def test_rows_split_between_the_routes_decode_in_one_batch_as_batch_one(
    sharp_llama_dir, monkeypatch, rope, hold
):
    """Four rows reuse the prefix and three are prefilled whole; all seven decode in one batch. Under
    dynamic rope (300 tokens, past the trained 256) a whole row is prefilled inside the batch's held
    scaling, which is its own length's, and decodes rescaling or held as a naive run does."""
    backend = load_hf_backend(make_method(str(sharp_llama_dir), rope, None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), seed=3)
    alone = [GreedyDecoder(backend, 12, hold_dynamic_rope=hold).naive(p) for p in prompts]
    pattern = [True, False, True, True, False, True, False]
    monkeypatch.setattr(hf_generation, "rows_reusing", lambda *args: pattern)
    cropped, decoded = [], []
    cropped_for, decode = hf_generation._SharedPrefix.cropped_for, GreedyDecoder._continue

    def spy_crop(self, i):
        cropped.append(i)
        return cropped_for(self, i)

    def spy_decode(self, logits, cache, rows, on_done):
        decoded.append(sorted(rows))
        return decode(self, logits, cache, rows, on_done)

    monkeypatch.setattr(hf_generation._SharedPrefix, "cropped_for", spy_crop)
    monkeypatch.setattr(GreedyDecoder, "_continue", spy_decode)
    answers = {}
    decoder = GreedyDecoder(backend, 12, hold_dynamic_rope=hold, batch_size=7)
    assert decode_prompts(decoder, prompts, prefixes, answers.__setitem__)
    assert [answers[i] for i in range(len(prompts))] == alone
    assert sorted(cropped) == [0, 2, 3, 5]
    assert decoded == [list(range(7))]


@pytest.mark.usefixtures("prefix_route_always")
@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_rests_prefilled_in_chunks_answer_as_batch_one(tiny_llama_bos_dir, monkeypatch, chunk):
    """Rests of 50..260 tokens in forwards of ``chunk``: a chunk's queries start past the cache."""
    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), seed=3)
    alone = [GreedyDecoder(backend, 12).naive(p) for p in prompts]
    monkeypatch.setattr(hf_generation, "REST_CHUNK", chunk)
    answers = {}
    assert decode_prompts(GreedyDecoder(backend, 12, batch_size=3), prompts, prefixes, answers.__setitem__)
    assert [answers[i] for i in range(len(prompts))] == alone


def test_prefill_alone_gives_each_rows_own_last_logits_in_decoding_order(tiny_llama_bos_dir):
    """What the prefill benchmark times: rows of both routes, reusing rows first (deepest prefix
    first), each row's logits those of its prompt prefilled alone."""
    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=5, seed=4)
    reusing = [True, False, True, True, False]
    decoder = GreedyDecoder(backend, 1, batch_size=5)
    logits, _ = decoder.prefill(prompts, prefixes, reusing)
    alone = torch.cat([decoder.prefill([p], [0], [False])[0] for p in prompts])  # (5, vocab)
    reusing_rows = sorted((i for i in range(5) if reusing[i]), key=lambda i: -prefixes[i])
    order = reusing_rows + [1, 4]
    torch.testing.assert_close(logits, alone[order], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(logits, alone)


def test_masked_attention_on_grouped_heads_gives_the_copied_heads_numbers(tiny_llama_bos_dir, monkeypatch):
    """Rests past a cached prefix and left-padded rows run under a mask; on CPU they read each key/value
    head once for its query heads instead of a copy per query head, and every logit is the same bit for
    bit. The switch is on while the decoder's forwards run, and only then."""
    from coca_eval.backends.padding import PaddedRows

    backend = load_hf_backend(make_method(str(tiny_llama_bos_dir), "none", None, "float32", "hf"))
    prompts, prefixes = prompts_sharing_prefix(len(backend.tokenizer), n=3, seed=5)
    rows, padded = PaddedRows.left_padded([prompts[0], prompts[1][:40]], len(prompts[0]), "cpu")
    switch = []
    backend.model.register_forward_pre_hook(
        lambda *_: switch.append(os.environ.get(prefix_route.GROUPED_HEADS_SWITCH))
    )

    def logits() -> list[torch.Tensor]:
        decoder = GreedyDecoder(backend, 1, batch_size=3)
        rests, _ = decoder.prefill(prompts, prefixes, [True, True, True])  # (3, vocab)
        padded_rows, _ = decoder._forward(rows, None, padded.prompt_inputs())  # (2, vocab)
        return [rests, padded_rows]

    grouped = logits()
    assert set(switch) == {"1"} and prefix_route.GROUPED_HEADS_SWITCH not in os.environ
    monkeypatch.setattr(hf_generation, "grouped_kv_heads", lambda device: contextlib.nullcontext())
    switch.clear()
    for fast, copied in zip(grouped, logits(), strict=True):
        assert torch.equal(fast, copied)
    assert set(switch) == {None}
