"""Length-dependent rotary tables (dynamic NTK, dynamic YaRN) on the hf backend.

transformers rescales such a table inside the rotary module's forward, from the largest position that
forward sees: it grows the scaling whenever a longer sequence arrives and shrinks it back to the
trained table whenever a sequence shorter than the trained length arrives after a longer one. Two
consequences matter for evaluation:

* Order. Left alone, a 16k window followed by a 10k one reuses the 16k frequencies, so numbers would
  depend on what ran before; :func:`reset` puts every table back to the trained one before each piece
  of work.
* Pieces. A prompt prefilled in pieces (a shared prefix, then each sample's own rest) would see each
  piece's own length, not the prompt's. :func:`held_at` scales the tables for the whole prompt's length
  first, exactly as one forward over the whole prompt would (through the module's own update, so the
  arithmetic is the same), and keeps them there while the shorter pieces run.
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


@contextmanager
def held_at(modules: DynamicModules, length: int, device: torch.device) -> Iterator[None]:
    """The tables a single forward over ``length`` tokens uses, kept for every forward inside.

    Only positions below ``length`` may run inside: a later position would grow the scaling, as it
    does during generation, which is why decoding happens outside. The shrink-back rule is switched
    off inside (a short first piece must not undo the scaling) and restored on the way out.
    """
    reset(modules)
    _scale_for(modules, length, device)
    trained = [module.original_max_seq_len for module, _ in modules]
    try:
        for module, _ in modules:
            module.original_max_seq_len = 0
        yield
    finally:
        for (module, _), value in zip(modules, trained, strict=True):
            module.original_max_seq_len = value
