"""The last-layer-on-scored-rows path equals the model's own full forward."""

from __future__ import annotations

import pytest
import torch

from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.tail import supports_tail_rows, tail_rows
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_llama


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("tail") / "llama", add_bos=False, num_attention_heads=4)


@pytest.mark.parametrize("rope", ["none", "linear:2", "dynamic:2", "yarn:2"])
@pytest.mark.parametrize("keep", [1, 7, 64])
def test_tail_rows_equal_full_decoder(llama_dir, rope, keep):
    backend = load_hf_backend(make_method(str(llama_dir), rope, None, "float32", "hf"))
    assert backend._use_tail_rows
    ids = torch.randint(0, 300, (3, 96))  # [B, N]
    decoder = backend.model.get_decoder()
    with torch.inference_mode():
        backend._reset_dynamic_rope()
        full = decoder(input_ids=ids).last_hidden_state[:, -keep:]  # [B, K, H]
        backend._reset_dynamic_rope()
        with tail_rows(backend.model, keep):
            tail = decoder(input_ids=ids).last_hidden_state  # [B, K, H]
    assert tail.shape == full.shape
    torch.testing.assert_close(tail, full, rtol=1e-5, atol=1e-5)
    assert type(decoder.layers[-1]).__name__ == "LlamaDecoderLayer"  # restored after the block


def test_score_uses_fewer_rows_but_same_nll(llama_dir):
    backend = load_hf_backend(make_method(str(llama_dir), "none", None, "float32", "hf"))
    ids = torch.randint(0, 300, (2, 80))  # [B, N]
    targets = ids[:, 50:79]  # [B, n]: predicted at positions 49..77
    fast = backend.score(ids, 49, targets)
    backend._use_tail_rows = False
    slow = backend.score(ids, 49, targets)
    torch.testing.assert_close(fast, slow, rtol=1e-9, atol=1e-5)


def test_coca_models_do_not_take_the_tail_path():
    from tests.models.test_coca_parity import tiny_coca

    assert not supports_tail_rows(tiny_coca("llama"))
    assert not supports_tail_rows(tiny_coca("neox"))
