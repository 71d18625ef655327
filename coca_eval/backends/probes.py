"""Load-time probes: each faster scoring path of the hf backend runs only where a short forward pass
shows it gives the model's own numbers; anything unusual keeps the plain path.

:data:`FAST_PATHS` is the one place that says which paths exist, in which order they are probed and
which earlier path each one needs. Every probe compares its path with the plain one while no fast path
is on yet, through the backend's small public surface (``model``, ``device``, ``softcap``,
``reset_dynamic_rope`` and ``final_hidden``), so a probe never depends on another's outcome except
through ``requires``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from coca_eval.backends.banded import banded_sdpa, may_band, sliding_windows
from coca_eval.backends.tail import supports_tail_rows, tail_rows

PROBE_TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 3e-2}
"""rtol = atol of every probe, by the model's dtype. A fast path computes the same sums in another order
(or, for the split head, the final softcap in float32), so it agrees with the plain path to a few
rounding steps of the model's own precision."""


def _probe_ids(backend, start: int, stop: int) -> torch.Tensor:
    vocab = backend.model.config.get_text_config().vocab_size
    return (torch.arange(start, stop, device=backend.device).unsqueeze(0) * 7) % vocab  # (1, n)


def _close(backend, fast: torch.Tensor, plain: torch.Tensor) -> bool:
    tolerance = PROBE_TOLERANCE.get(backend.model.dtype, max(PROBE_TOLERANCE.values()))
    return fast.shape == plain.shape and torch.allclose(fast, plain, rtol=tolerance, atol=tolerance)


@torch.inference_mode()
def split_head_matches_forward(backend) -> bool:
    """Decoder, then the LM head (and final softcap) by hand == the model's own logits."""
    if backend.softcap is None and getattr(backend.model.config, "final_logit_softcapping", None):
        return False
    probe = _probe_ids(backend, 3, 11)
    backend.reset_dynamic_rope()
    reference = backend.model(input_ids=probe).logits.float()  # (1, 8, vocab)
    hidden = backend.final_hidden(probe)  # (1, 8, hidden)
    split = backend.model.get_output_embeddings()(hidden).float()  # (1, 8, vocab)
    if backend.softcap:
        split = torch.tanh(split / backend.softcap) * backend.softcap  # (1, 8, vocab)
    return _close(backend, split, reference)


@torch.inference_mode()
def tail_rows_match_full(backend) -> bool:
    """The last layer on the kept rows only == the full decoder's last rows."""
    if not supports_tail_rows(backend.model):
        return False
    probe = _probe_ids(backend, 5, 17)
    backend.reset_dynamic_rope()
    full = backend.final_hidden(probe)[:, 7:]  # (1, 5, hidden)
    with tail_rows(backend.model, 5):
        tail = backend.final_hidden(probe)  # (1, 5, hidden)
    return _close(backend, tail, full)


@torch.inference_mode()
def banded_matches_sdpa(backend) -> bool:
    """Banded sliding-window attention == plain SDPA, on a probe longer than the window."""
    if not may_band(backend.model):
        return False
    probe = _probe_ids(backend, 1, max(sliding_windows(backend.model)) + 41)
    backend.reset_dynamic_rope()
    plain = backend.final_hidden(probe)  # (1, n, hidden)
    with banded_sdpa():
        banded = backend.final_hidden(probe)  # (1, n, hidden)
    return _close(backend, banded, plain)


@dataclass(frozen=True)
class FastPath:
    """One faster scoring path: its name, its probe, and the paths it builds on."""

    name: str
    probe: Callable[[object], bool]
    requires: tuple[str, ...] = ()


SPLIT_HEAD, TAIL_ROWS, BANDED = "split_head", "tail_rows", "banded"
FAST_PATHS: tuple[FastPath, ...] = (
    # the LM head on the scored rows only; the other two speed up the decoder run that path makes
    FastPath(SPLIT_HEAD, split_head_matches_forward),
    FastPath(TAIL_ROWS, tail_rows_match_full, requires=(SPLIT_HEAD,)),
    FastPath(BANDED, banded_matches_sdpa, requires=(SPLIT_HEAD,)),
)


def choose_fast_paths(backend) -> frozenset[str]:
    """The names of the fast paths whose probe passed and whose prerequisites were chosen, in
    :data:`FAST_PATHS` order (a path whose prerequisite failed is not even probed)."""
    chosen: set[str] = set()
    for path in FAST_PATHS:
        if set(path.requires) <= chosen and path.probe(backend):
            chosen.add(path.name)
    return frozenset(chosen)
