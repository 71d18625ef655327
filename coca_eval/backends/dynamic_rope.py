"""Length-dependent rotary tables (dynamic NTK, dynamic YaRN) on the hf backend.

transformers rescales such a table inside the rotary module's forward, from the largest position that
forward sees: it grows the scaling whenever a longer sequence arrives and shrinks it back to the
trained table whenever a sequence shorter than the trained length arrives after a longer one. Three
consequences matter for evaluation:

* Order. Left alone, a 16k window followed by a 10k one reuses the 16k frequencies, so numbers would
  depend on what ran before; :func:`reset` puts every table back to the trained one before each piece
  of work.
* Pieces. A prompt prefilled in pieces (a shared prefix, then each sample's own rest) would see each
  piece's own length, not the prompt's. :func:`held_at` scales the tables for the whole prompt's length
  first, exactly as one forward over the whole prompt would (through the module's own update, so the
  arithmetic is the same), and keeps them there while the shorter pieces run.
* Answers. transformers rescales again with every generated token while the cached keys keep the
  scaling they were computed with; vLLM holds the prompt's scaling for the whole answer. ``held_at``
  can do either (``through_answer``), so the passkey task offers both (``--dynamic-rope``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

DynamicModules = list[tuple[torch.nn.Module, str]]
"""Each rotary module that rescales, with the prefix of its buffer names (per-layer-type tables)."""


def dynamic_rope_modules(model: torch.nn.Module) -> DynamicModules:
    """Rotary modules that rescale with sequence length, with their buffer-name prefixes."""
    found = []
    for module in model.modules():
        rope_type = getattr(module, "rope_type", None)
        types = rope_type.values() if isinstance(rope_type, dict) else [rope_type]
        if not any(isinstance(t, str) and "dynamic" in t for t in types):
            continue
        for name in list(vars(module)) + [n for n, _ in module.named_buffers(recurse=False)]:
            if name.endswith("original_inv_freq"):
                found.append((module, name[: -len("original_inv_freq")]))
    return found


def reset(modules: DynamicModules) -> None:
    """Every table back to the trained one, as if no sequence had been seen yet."""
    for module, prefix in modules:
        original = getattr(module, f"{prefix}original_inv_freq")
        module.register_buffer(f"{prefix}inv_freq", original.clone(), persistent=False)
        setattr(module, f"{prefix}max_seq_len_cached", module.original_max_seq_len)


def _scale_for(modules: DynamicModules, length: int, device: torch.device) -> None:
    """Run each module's own update as a forward over ``length`` tokens would (its last position)."""
    last = torch.tensor([[length - 1]], device=device)  # (1, 1)
    probe = torch.zeros(1, device=device)  # only its device and dtype are read
    for module, prefix in modules:
        layer = {"layer_type": prefix[:-1]} if prefix else {}
        module(probe, last, **layer)


NEVER = 2**62
"""A cached length no position reaches: the scaling never grows while it is set."""


@contextmanager
def held_at(
    modules: DynamicModules, length: int, device: torch.device, through_answer: bool = False
) -> Iterator[None]:
    """The tables a single forward over ``length`` tokens uses, kept for every forward inside.

    The shrink-back rule is switched off inside (a short first piece must not undo the scaling). A
    position at or past ``length`` grows the scaling as usual, as transformers does with every
    generated token, unless ``through_answer``: then the prompt's scaling is held for the answer too,
    as vLLM's engine holds the base it was built with. Both rules are restored on the way out.
    """
    reset(modules)
    _scale_for(modules, length, device)
    saved = [
        (module.original_max_seq_len, getattr(module, f"{p}max_seq_len_cached")) for module, p in modules
    ]
    try:
        for module, prefix in modules:
            module.original_max_seq_len = 0
            if through_answer:
                setattr(module, f"{prefix}max_seq_len_cached", NEVER)
        yield
    finally:
        for (module, prefix), (trained, cached) in zip(modules, saved, strict=True):
            module.original_max_seq_len = trained
            if through_answer:
                setattr(module, f"{prefix}max_seq_len_cached", cached)
