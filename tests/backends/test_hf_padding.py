"""Prompts of unequal lengths decoded in left-padded batches against one at a time: the same tokens for
every row, on every model kind the zoo ships (CoCA among them), CoCA's GPT-NeoX form, the static rope
patches and SmolLM2 where it is cached; dynamic NTK and sliding windows keep the one-length path; the
planner keeps padding within its share; a row with non-finite logits fails alone."""

import random

import pytest
import torch

from coca_eval.backends import hf_generation
from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts
from coca_eval.backends.padding import PAD_SHARE, padded_batches, padding_matches_batch_one
from coca_eval.backends.stopping import StopRule
from coca_eval.errors import NonFiniteOutput
from coca_eval.methods import make_method
from coca_eval.models.presets import resolve_model
from tests.tiny_models import make_tiny_coca, make_tiny_gemma3

ZOO = ["zoo-rope", "zoo-coca-slack", "zoo-coca-strict", "zoo-alibi", "zoo-prope-0.75", "zoo-nope"]
LENGTHS = (300, 187, 264, 120, 299, 233, 150, 281)


def _model_dir(name: str, tmp_path_factory):
    if name == "coca-gpt-neox":
        return make_tiny_coca(tmp_path_factory.mktemp("neox"), "gpt_neox")
    if name == "gemma3-sliding":
        return make_tiny_gemma3(tmp_path_factory.mktemp("gemma"), sliding_window=64)
    if name == "smollm2-135m":
        try:
            return resolve_model(name)[0]
        except Exception as exc:  # noqa: BLE001 (not cached, and no network to make it)
            pytest.skip(f"SmolLM2 is not cached here: {exc}")
    return resolve_model(name)[0]


def _backend(path, rope: str = "none"):
    return load_hf_backend(make_method(str(path), rope, None, "float32", "hf"))


def _prompts(vocab: int, lengths=LENGTHS, seed: int = 0) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(3, vocab) for _ in range(n)] for n in lengths]


def _ragged_stop(budget: int = 14) -> StopRule:
    """Rows stop at different steps (on their text's length), and some run to the budget."""
    return StopRule(budget, decided=lambda text: len(text) % 9 == 4)


def _one_by_one(backend, prompts, stop) -> list[list[int]]:
    decoder = GreedyDecoder(backend, stop, batch_size=1)
    return [decoder.naive(p) for p in prompts]


def _batched(backend, prompts, stop, batch: int) -> list[list[int]]:
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, stop, batch_size=batch)
    decode_prompts(decoder, prompts, [0] * len(prompts), answers.__setitem__, prefix_reuse=False)
    return [answers[i] for i in range(len(prompts))]


@pytest.fixture
def decoded_batches(monkeypatch) -> list[tuple[list[int], bool]]:
    """Each batch decoded from here on: its rows, and whether it was padded."""
    seen: list[tuple[list[int], bool]] = []
    decode = GreedyDecoder._continue

    def spy(self, logits, cache, rows, on_done, padded=None):
        seen.append((sorted(rows), padded is not None))
        return decode(self, logits, cache, rows, on_done, padded)

    monkeypatch.setattr(GreedyDecoder, "_continue", spy)
    return seen


def _check_padded_rows(backend, decoded_batches, prompts, batches) -> None:
    stop = _ragged_stop()
    alone = _one_by_one(backend, prompts, stop)
    assert len({len(a) for a in alone}) > 1, "the rows must stop at different steps"
    assert backend.pads_exactly
    for batch in batches:
        decoded_batches.clear()
        assert _batched(backend, prompts, stop, batch) == alone, batch
        assert any(padded and len(rows) > 1 for rows, padded in decoded_batches), batch


@pytest.mark.parametrize("name", [*ZOO, "coca-gpt-neox"])
def test_padded_rows_give_batch_one_tokens(name, tmp_path_factory, decoded_batches):
    backend = _backend(_model_dir(name, tmp_path_factory))
    prompts = _prompts(backend.model.config.get_text_config().vocab_size)
    _check_padded_rows(backend, decoded_batches, prompts, (3, 8))


@pytest.mark.slow
def test_padded_rows_of_smollm2_give_batch_one_tokens(tmp_path_factory, decoded_batches):
    """The 30-layer SmolLM2-135M-Instruct, where cached (minutes on 2 CPU cores)."""
    backend = _backend(_model_dir("smollm2-135m", tmp_path_factory))
    prompts = _prompts(backend.model.config.get_text_config().vocab_size)
    _check_padded_rows(backend, decoded_batches, prompts, (8,))


@pytest.mark.parametrize("rope", ["linear:2", "ntk:4", "yarn:2", "base:20000"])
def test_padded_rows_under_static_rope_patches_give_batch_one_tokens(sharp_llama_dir, rope):
    """Prompts past the trained 256 positions, each rope patch whose table does not depend on length."""
    backend = _backend(sharp_llama_dir, rope)
    prompts = _prompts(len(backend.tokenizer), (420, 300, 390, 350, 270))
    assert backend.pads_exactly
    assert _batched(backend, prompts, _ragged_stop(), 5) == _one_by_one(backend, prompts, _ragged_stop())


@pytest.mark.parametrize("hold", [False, True])
def test_dynamic_ntk_keeps_the_one_length_path(sharp_llama_dir, decoded_batches, hold):
    """Dynamic NTK scales from the longest position of a forward, so a short row padded beside a long
    one would be rotated at the long row's scaling: prompts of unequal lengths decode one by one (and
    the rows of one length among them still together), as batch 1 answers."""
    backend = _backend(sharp_llama_dir, "dynamic:2")
    assert not backend.pads_exactly
    prompts = _prompts(len(backend.tokenizer), (420, 420, 300, 300, 350))
    stop = _ragged_stop()
    alone = [GreedyDecoder(backend, stop, hold_dynamic_rope=hold).naive(p) for p in prompts]
    decoded_batches.clear()
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, stop, hold_dynamic_rope=hold, batch_size=5)
    decode_prompts(decoder, prompts, [0] * 5, answers.__setitem__, prefix_reuse=False)
    assert [answers[i] for i in range(5)] == alone
    assert sorted(rows for rows, _ in decoded_batches) == [[0, 1], [2, 3], [4]]
    assert not any(padded for _, padded in decoded_batches)


def test_sliding_windows_keep_the_one_length_path(tmp_path_factory):
    backend = _backend(_model_dir("gemma3-sliding", tmp_path_factory))
    assert not backend.pads_exactly
    prompts = _prompts(backend.model.config.get_text_config().vocab_size, (150, 120, 90))
    assert _batched(backend, prompts, 6, 3) == _one_by_one(backend, prompts, 6)


def test_a_model_that_ignores_the_mask_is_not_padded(tiny_llama_dir, monkeypatch):
    """The probe finds a model whose forward drops the attention mask and the position ids."""
    backend = _backend(tiny_llama_dir)
    assert padding_matches_batch_one(backend)
    forward = backend.model.forward

    def careless(*args, attention_mask=None, position_ids=None, **kwargs):
        return forward(*args, **kwargs)

    monkeypatch.setattr(backend.model, "forward", careless)
    assert not padding_matches_batch_one(backend)


def test_rows_of_one_length_are_never_padded(tiny_llama_dir, decoded_batches):
    backend = _backend(tiny_llama_dir)
    prompts = _prompts(len(backend.tokenizer), (200,) * 5)
    alone = _one_by_one(backend, prompts, 5)
    decoded_batches.clear()
    assert _batched(backend, prompts, 5, 3) == alone
    assert sorted(len(rows) for rows, _ in decoded_batches) == [2, 3]
    assert not any(padded for _, padded in decoded_batches)


def test_padded_rows_prefilled_in_parts_are_stacked_into_one_batch(
    tiny_llama_dir, monkeypatch, decoded_batches
):
    backend = _backend(tiny_llama_dir)
    prompts = _prompts(len(backend.tokenizer))
    alone = _one_by_one(backend, prompts, _ragged_stop())
    decoded_batches.clear()
    monkeypatch.setattr(hf_generation, "PREFILL_TOKENS", 2 * max(LENGTHS))  # two rows per forward
    assert _batched(backend, prompts, _ragged_stop(), 8) == alone
    assert max(len(rows) for rows, _ in decoded_batches) > 2


def test_a_non_finite_row_fails_alone_in_a_padded_batch(tiny_llama_dir):
    from transformers import AutoModelForCausalLM

    poisoned_token = 2
    model = AutoModelForCausalLM.from_pretrained(tiny_llama_dir, dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[poisoned_token] = float("nan")
    backend = _backend(tiny_llama_dir)
    backend.model = model.eval()
    prompts = _prompts(len(backend.tokenizer), (300, 280, 260, 240, 220))
    prompts[2][-1] = poisoned_token
    healthy = [0, 1, 3, 4]
    alone = _one_by_one(backend, [prompts[i] for i in healthy], _ragged_stop())
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, _ragged_stop(), batch_size=5)
    with pytest.raises(NonFiniteOutput, match="sample 2: non-finite logits at answer token 1"):
        decode_prompts(decoder, prompts, [0] * 5, answers.__setitem__, prefix_reuse=False)
    assert sorted(answers) == healthy
    assert [answers[i] for i in healthy] == alone


def test_the_plan_sorts_by_length_and_caps_the_padding():
    lengths = [100, 4000, 3900, 1000, 3000, 2900, 980, 3950, 1010]
    batches = padded_batches(lengths, 4)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 4
        assert [lengths[i] for i in batch] == sorted((lengths[i] for i in batch), reverse=True)
        width = lengths[batch[0]]
        assert sum(width - lengths[i] for i in batch) <= PAD_SHARE * width * len(batch)
    assert batches == [[1, 7, 2, 4], [5], [8, 3, 6, 0]]


def test_the_plan_pads_nothing_when_the_share_is_zero():
    assert padded_batches([5, 7, 5, 7, 6], 8, share=0.0) == [[1, 3], [4], [0, 2]]
