"""Prompts of one length that share a random prefix with the first one: what the shared-prefix route
reuses, for the tests that check its rows answer as batch 1 (a module of its own, since pytest would
collect a test module imported by another twice)."""

from __future__ import annotations

import random

LENGTH = 300


def prompts_sharing_prefix(
    vocab: int, n: int = 7, seed: int = 0, length: int = LENGTH
) -> tuple[list[list[int]], list[int]]:
    """``n`` prompts of ``length`` tokens, each keeping 40..250 tokens of the first one's ids, and those
    prefix lengths (the ``prefix_lengths`` the decoder is given)."""
    rng = random.Random(seed)
    base = [rng.randrange(3, vocab) for _ in range(length)]
    prompts, prefixes = [], []
    for _ in range(n):
        keep = rng.randrange(40, 250)
        prompts.append(base[:keep] + [rng.randrange(3, vocab) for _ in range(length - keep)])
        prefixes.append(keep)
    return prompts, prefixes
