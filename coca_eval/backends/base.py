"""The small interface every backend implements (lm-eval's lesson: keep it to what tasks need)."""

from __future__ import annotations

from typing import Protocol

import torch


class ScoringBackend(Protocol):
    """Scores token windows; exposes its tokenizer and the model's trained context length."""

    tokenizer: object
    fingerprint: str
    trained_context: int | None

    @property
    def bos_token_id(self) -> int | None: ...

    @property
    def adds_bos(self) -> bool:
        """Whether the tokenizer puts BOS in front of a text by default (LLaMA, Gemma: yes)."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        ...

    def score(self, input_ids: torch.Tensor, first_logit: int, targets: torch.Tensor) -> torch.Tensor:
        """NLL of ``targets`` (b, s) predicted at positions ``first_logit .. first_logit+s-1`` of
        ``input_ids`` (b, n); returns float64 (b, s) on the CPU."""
        ...


def is_out_of_memory(exc: BaseException) -> bool:
    """CUDA OOM, a CPU allocator failure, or Python's MemoryError: all become an ``OOM`` cell."""
    if isinstance(exc, (MemoryError, torch.OutOfMemoryError)):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "not enough memory" in text or "can't allocate memory" in text
    )
