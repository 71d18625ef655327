"""Swap transformers' ``sdpa`` attention function for the length of a block, then put it back.

Both the banded attention of the hf backend and the analyses' capture hooks route every model that
uses ``sdpa`` through their own function this way; one place restores exactly what was there before
(an earlier swap, or transformers' default when nothing had been registered).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def sdpa_swapped(make: Callable[[Callable | None], Callable]) -> Iterator[None]:
    """Within the block ``sdpa`` runs ``make(previous)``; ``previous`` is the function registered
    before (None when transformers' built-in one is in force)."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS as registry

    previous = registry._local_mapping.get("sdpa")
    registry["sdpa"] = make(previous)
    try:
        yield
    finally:
        if previous is None:
            del registry["sdpa"]
        else:
            registry["sdpa"] = previous
