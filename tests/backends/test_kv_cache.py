"""The buffered KV cache against transformers' own: the same logits, bit for bit, on every model kind
the zoo ships and on CoCA's GPT-NeoX form, through decoding and through a crop back to a shorter
prefix (the shared-prefix route)."""

import pytest
import torch
from transformers import AutoModelForCausalLM
from transformers.cache_utils import DynamicCache

import coca_eval.models  # noqa: F401  (registers the CoCA, p-RoPE and ALiBi model types)
from coca_eval.backends.kv_cache import HEADROOM, BufferedLayer, buffered_cache
from coca_eval.models.layer_cache import cache_keyword, returned_cache
from coca_eval.models.presets import resolve_model
from tests.tiny_models import make_tiny_coca, make_tiny_gemma3

ZOO = ["zoo-rope", "zoo-coca-slack", "zoo-coca-strict", "zoo-alibi", "zoo-prope-0.75", "zoo-nope"]


def _model(name: str, tmp_path):
    if name == "coca-gpt-neox":
        directory = make_tiny_coca(tmp_path / "neox", "gpt_neox")
    else:
        directory = resolve_model(name)[0]
    return AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()


@torch.inference_mode()
def _logits_through(model, cache, pieces: list[list[int]], steps: int, crop_to: int | None = None):
    """Every step's last logits: prefill ``pieces`` one by one, optionally crop back to ``crop_to``
    positions and prefill the first piece's rest again, then decode greedily for ``steps`` tokens."""
    keyword, seen = cache_keyword(model), []

    def forward(ids):
        nonlocal cache
        out = model(input_ids=torch.tensor([ids]), use_cache=True, **{keyword: cache})
        cache = returned_cache(out)
        seen.append(out.logits[0, -1].clone())  # (vocab,)
        return int(out.logits[0, -1].argmax())

    for piece in pieces:
        token = forward(piece)
    if crop_to is not None:
        cache.crop(crop_to - cache.get_seq_length())
        token = forward(pieces[0][crop_to:])
    for _ in range(steps):
        token = forward([token])
    return torch.stack(seen)  # (forwards, vocab)


@pytest.mark.parametrize("name", [*ZOO, "coca-gpt-neox"])
def test_decoding_gives_the_plain_cache_logits_bit_for_bit(name, tmp_path):
    model = _model(name, tmp_path)
    ids = [(11 * i) % 300 + 5 for i in range(300)]
    pieces, steps = [ids[:200], ids[200:]], HEADROOM + 20  # past the first buffer: it must regrow
    plain = _logits_through(model, None, pieces, steps)
    buffered = buffered_cache(model)
    assert buffered is not None and all(isinstance(layer, BufferedLayer) for layer in buffered.layers)
    assert torch.equal(_logits_through(model, buffered, pieces, steps), plain)


@pytest.mark.parametrize("name", ["zoo-rope", "zoo-coca-slack"])
def test_a_crop_then_new_positions_give_the_plain_cache_logits(name, tmp_path):
    """The shared-prefix route: crop to a shorter prefix, write this sample's rest over the dropped
    positions, decode; a plain cache doing the same gives the same logits."""
    model = _model(name, tmp_path)
    ids = [(7 * i) % 300 + 5 for i in range(260)]
    plain = _logits_through(model, DynamicCache(), [ids], 30, crop_to=120)
    assert torch.equal(_logits_through(model, buffered_cache(model), [ids], 30, crop_to=120), plain)


def test_sliding_window_models_keep_transformers_cache(tmp_path):
    """A layer kind this cache does not model (sliding windows) leaves the choice to the model."""
    model = AutoModelForCausalLM.from_pretrained(make_tiny_gemma3(tmp_path / "gemma"), dtype=torch.float32)
    assert buffered_cache(model) is None


@pytest.mark.parametrize(
    ("going", "order"),
    [([0, 2, 4], [0, 4, 2]), ([3, 4], [3, 4]), ([1, 2, 3, 4], [4, 1, 2, 3]), ([0, 1, 2], [0, 1, 2])],
)
def test_rows_leaving_a_batch_are_filled_by_the_last_kept_rows(going, order):
    """Rows that stop leave their slots to kept rows from past the kept count; every kept row's keys and
    values stay its own, as a gather into new buffers gives them, and the next write goes in place."""
    from coca_eval.backends.kv_cache import select_rows

    cache = DynamicCache()
    cache.layers = [BufferedLayer()]
    keys, values = torch.randn(5, 2, 7, 4), torch.randn(5, 2, 7, 4)  # (b, h, n, d)
    cache.layers[0].update(keys, values)
    assert select_rows(cache, going) == order
    layer = cache.layers[0]
    assert torch.equal(layer.keys, keys[order]) and torch.equal(layer.values, values[order])
    step = torch.randn(len(order), 2, 1, 4)  # (r, h, 1, d)
    written, _ = layer.update(step, step)
    assert torch.equal(written, torch.cat([keys[order], step], dim=2))
    assert written.data_ptr() == layer._buffers[0].data_ptr()


def test_any_other_order_is_gathered():
    cache = DynamicCache()
    cache.layers = [BufferedLayer()]
    keys = torch.randn(4, 2, 3, 4)  # (b, h, n, d)
    cache.layers[0].update(keys, keys)
    cache.batch_select_indices(torch.tensor([2, 0]))
    assert torch.equal(cache.layers[0].keys, keys[[2, 0]])
