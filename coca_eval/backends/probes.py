"""Load-time probes: each faster scoring path of the hf backend runs only where a short forward pass
shows it gives the model's own numbers; anything unusual keeps the plain path."""

from __future__ import annotations

import torch

from coca_eval.backends.banded import banded_sdpa, may_band, sliding_windows
from coca_eval.backends.tail import supports_tail_rows, tail_rows


def _probe_ids(backend, start: int, stop: int) -> torch.Tensor:
    vocab = backend.model.config.get_text_config().vocab_size
    return (torch.arange(start, stop, device=backend.device).unsqueeze(0) * 7) % vocab  # [1, n]


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    tol = 1e-4 if b.dtype == torch.float32 else 3e-2
    return a.shape == b.shape and torch.allclose(a, b, rtol=tol, atol=tol)


@torch.inference_mode()
def split_head_matches_forward(backend) -> bool:
    """Decoder, then the LM head (and final softcap) by hand == the model's own logits."""
    probe = _probe_ids(backend, 3, 11)
    backend._reset_dynamic_rope()
    reference = backend.model(input_ids=probe).logits.float()  # [1, 8, V]
    if backend._softcap is None and getattr(backend.model.config, "final_logit_softcapping", None):
        return False
    hidden = backend._final_hidden(probe)  # [1, 8, H]
    split = backend.model.get_output_embeddings()(hidden).float()  # [1, 8, V]
    if backend._softcap:
        split = torch.tanh(split / backend._softcap) * backend._softcap
    return torch.allclose(split, reference, rtol=1e-3, atol=1e-3)


@torch.inference_mode()
def tail_rows_match_full(backend) -> bool:
    """The last layer on the kept rows only == the full decoder's last rows."""
    if not supports_tail_rows(backend.model):
        return False
    probe = _probe_ids(backend, 5, 17)
    backend._reset_dynamic_rope()
    full = backend._final_hidden(probe)[:, 7:]  # [1, 5, H]
    with tail_rows(backend.model, 5):
        tail = backend._final_hidden(probe)  # [1, 5, H]
    return _close(tail, full)


@torch.inference_mode()
def banded_matches_sdpa(backend) -> bool:
    """Banded sliding-window attention == plain SDPA, on a probe longer than the window."""
    if not may_band(backend.model):
        return False
    probe = _probe_ids(backend, 1, max(sliding_windows(backend.model)) + 41)
    backend._reset_dynamic_rope()
    plain = backend._final_hidden(probe)  # [1, n, H]
    with banded_sdpa():
        banded = backend._final_hidden(probe)  # [1, n, H]
    return _close(banded, plain)
