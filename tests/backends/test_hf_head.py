"""The split LM head (chunks, cache-sized blocks, final-logit softcapping) equals the model's own logits."""

from __future__ import annotations

import pytest
import torch

from coca_eval.backends import hf
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_gemma3


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory):
    return make_tiny_gemma3(tmp_path_factory.mktemp("gemma3") / "tiny-gemma3")


@pytest.mark.parametrize("chunk_rows, block_rows", [(1000, 1000), (16, 3), (16, 1)])
def test_split_head_nll_equals_forward_logits(gemma3_dir, monkeypatch, chunk_rows, block_rows):
    backend = hf.load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    assert "split_head" in backend.fast_paths and backend.softcap == 5.0
    vocab = backend.model.get_output_embeddings().weight.shape[0]
    monkeypatch.setattr(hf, "HEAD_CHUNK_BYTES", 4 * vocab * 2 * chunk_rows)
    monkeypatch.setattr(hf, "CACHE_BLOCK_BYTES", 4 * vocab * 2 * block_rows)
    ids = torch.randint(2, vocab, (2, 40))  # [B, N]
    targets = ids[:, 1:]  # [B, N-1]
    nll = backend.score(ids, 0, targets)  # [B, N-1]
    with torch.inference_mode():
        logits = backend.model(input_ids=ids).logits[:, :-1].double()  # [B, N-1, V], softcapped
    expected = -logits.log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # [B, N-1]
    torch.testing.assert_close(nll, expected, rtol=1e-5, atol=1e-5)
