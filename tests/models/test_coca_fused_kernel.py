"""CoCA models with the fused Triton transform selected give the torch path's logits (Triton's CPU
interpreter; float32, where both do the same arithmetic, hence 1e-5 on logits after two layers)."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("triton")

from coca_eval.kernels import coca_transform, use_coca_kernel  # noqa: E402
from tests.models.test_coca_parity import ids, tiny_coca  # noqa: E402

MODELS = [
    pytest.param("llama", {}, id="llama-slack"),
    pytest.param("llama", {"coca_variant": "strict", "rope_fraction": 0.5}, id="llama-strict-p-rope"),
    pytest.param("neox", {}, id="neox-partial-rotary"),
    pytest.param("neox", {"coca_variant": "strict", "rope_fraction": 0.25}, id="neox-strict-p-rope"),
]


@pytest.fixture
def kernel_calls(monkeypatch) -> list:
    """Count the fused kernel's launches (each CoCA layer calls it once per forward)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    calls, original = [], coca_transform.fused_coca_transform

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(coca_transform, "fused_coca_transform", counted)
    return calls


@pytest.mark.parametrize(("kind", "overrides"), MODELS)
@torch.inference_mode()
def test_fused_kernel_gives_the_torch_path_logits(kind, overrides, kernel_calls):
    model = tiny_coca(kind, **overrides)
    tokens = ids()  # (2, 24)
    expected = model(tokens).logits  # (2, 24, V)
    with use_coca_kernel("triton"):
        fused = model(tokens).logits  # (2, 24, V)
    assert len(kernel_calls) == model.config.num_hidden_layers
    torch.testing.assert_close(fused, expected, rtol=1e-5, atol=1e-5)


@torch.inference_mode()
def test_generation_with_a_kv_cache_matches(kernel_calls):
    """The cache holds rope(t) from the kernel; greedy continuations are the torch path's."""
    model = tiny_coca("llama")
    prompt = ids(batch=1, length=10)
    expected = model.generate(prompt, max_new_tokens=6, do_sample=False)
    with use_coca_kernel("triton"):
        fused = model.generate(prompt, max_new_tokens=6, do_sample=False)
    assert len(kernel_calls) >= 6 * model.config.num_hidden_layers
    assert fused.tolist() == expected.tolist()


@torch.inference_mode()
def test_eager_path_and_attention_weights_keep_the_torch_ops(kernel_calls):
    model = tiny_coca("llama")
    with use_coca_kernel("triton"):
        out = model(ids(), output_attentions=True)
    assert out.attentions[0] is not None and not kernel_calls
