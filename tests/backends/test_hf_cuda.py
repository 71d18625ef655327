"""The hf backend on CUDA: its load-time probes pass there, its chunked LM head gives the unchunked
numbers, and scoring a 32k window never holds [L x vocab] logits."""

from __future__ import annotations

import pytest
import torch

from coca_eval.backends import hf, probes
from coca_eval.backends.hf import HFBackend, load_hf_backend
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_coca, make_tiny_gemma3, make_tiny_llama, make_tokenizer

pytestmark = pytest.mark.gpu
MIB = 2**20


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("cuda-llama"), add_bos=False)


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory):
    return make_tiny_gemma3(tmp_path_factory.mktemp("cuda-gemma3"))


def _decisions(directory, device: str, dtype: str) -> tuple[bool, bool, bool]:
    backend = load_hf_backend(make_method(str(directory), "none", None, dtype, "hf"), device=device)
    assert backend.device.type == device
    paths = backend.fast_paths
    return probes.SPLIT_HEAD in paths, probes.TAIL_ROWS in paths, probes.BANDED in paths


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_probes_decide_as_on_cpu(llama_dir, gemma3_dir, gpu_device, dtype):
    """The load-time probes (split head, last layer on scored rows, banded sliding-window attention)
    run on CUDA and decide as on CPU. In fp32 every path that applies is taken (LLaMA: split head and
    tail rows; Gemma 3: all three). In bf16, Gemma 3's split-head probe fails on CPU too (it compares
    the model's bf16-softcapped logits with the fp32 softcap at 1e-3), so it keeps the plain path."""
    for directory in (llama_dir, gemma3_dir):
        on_device = _decisions(directory, gpu_device, dtype)
        print(f"{directory.name} {dtype}: {gpu_device} {on_device}")
        assert on_device == _decisions(directory, "cpu", dtype)
    if dtype == "float32":
        assert _decisions(llama_dir, gpu_device, dtype) == (True, True, False)
        assert _decisions(gemma3_dir, gpu_device, dtype) == (True, True, True)


@torch.inference_mode()
def test_head_chunks_equal_one_chunk_on_cuda(llama_dir, gpu_device, monkeypatch):
    """Many small head chunks (and cache blocks) == one chunk: the chunking only bounds memory."""
    backend = load_hf_backend(make_method(str(llama_dir), "none", None, "float32", "hf"), device=gpu_device)
    ids = torch.randint(2, 300, (2, 200), generator=torch.Generator().manual_seed(0))  # (B, N)
    targets = ids[:, 101:]  # (B, 99)
    whole = backend.score(ids, 100, targets)  # (B, 99)
    row_bytes = 4 * backend.model.config.vocab_size * 2
    monkeypatch.setattr(hf, "HEAD_CHUNK_BYTES", 16 * row_bytes)  # the head in chunks of 16 rows
    monkeypatch.setattr(hf, "CACHE_BLOCK_BYTES", 3 * row_bytes)  # reduced 3 rows at a time
    chunked = backend.score(ids, 100, targets)  # (B, 99)
    torch.testing.assert_close(chunked, whole, rtol=1e-6, atol=1e-6)
    logits = backend.model(ids.to(gpu_device)).logits[:, 100:-1].double().cpu()  # (B, 99, V)
    expected = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    torch.testing.assert_close(chunked, expected, rtol=1e-4, atol=1e-4)


def _wide_vocab_backend(kind: str) -> HFBackend:
    """A 2-layer model with a 32k vocabulary in bf16 on CUDA: at L = 32768 its full logits would take
    32768 x 32000 x 2 bytes = 2 GiB (4 GiB in fp32), far above everything else it holds."""
    import tempfile

    from transformers import AutoModelForCausalLM

    with tempfile.TemporaryDirectory() as directory:
        overrides = dict(vocab_size=32000, max_position_embeddings=32768)
        if kind == "llama":
            make_tiny_llama(directory, add_bos=False, **overrides)
        else:
            make_tiny_coca(directory, "llama", **overrides)
        model = AutoModelForCausalLM.from_pretrained(
            directory, dtype=torch.bfloat16, attn_implementation="sdpa"
        )
    return HFBackend(model.cuda().eval(), make_tokenizer(add_bos=False), "wide", None)


@pytest.mark.parametrize("kind", ["llama", "coca"])
def test_32k_window_never_holds_full_logits(cuda_only, kind):
    """Peak CUDA memory while scoring the last 512 tokens of a 32768-token window stays under a quarter
    of what the bf16 [L x vocab] logits alone would need (500 MiB of 2000) above the loaded model."""
    backend = _wide_vocab_backend(kind)
    length, scored = 32768, 512
    full_logits = length * backend.model.config.vocab_size * 2  # bytes, bf16
    ids = torch.randint(2, 32000, (1, length), generator=torch.Generator().manual_seed(1))  # (1, L)
    targets = ids[:, length - scored :]  # (1, S)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    nll = backend.score(ids, length - scored - 1, targets)  # (1, S)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    print(
        f"{kind}: peak {peak / MIB:.0f} MiB over the model; bf16 [L x V] logits: {full_logits / MIB:.0f} MiB"
    )
    assert nll.shape == (1, scored) and torch.isfinite(nll).all()
    assert full_logits == 2000 * MIB and peak < full_logits / 4
