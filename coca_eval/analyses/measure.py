"""What every analysis does around one forward: hook, run, check that RoPE really rotated something."""

from __future__ import annotations

from typing import Any

import numpy as np

from coca_eval.analyses.capture import capture, run_decoder
from coca_eval.errors import CocaEvalError


def observe(backend: Any, ids: list[int], analysis: str, advance, on_rope=None, on_attention=None) -> None:
    """One decoder forward over ``ids`` with the hooks on; ``advance`` ticks once per layer."""
    with capture(backend.model, analysis, on_rope, on_attention, advance) as state:
        run_decoder(backend, ids)
    if on_rope is not None and state["calls"] == 0:
        raise CocaEvalError(
            f"the model never applied its rotary embedding: the {analysis} analysis has no meaning for it"
        )


def require_rotation(theta: np.ndarray, analysis: str) -> None:
    """NoPE dressed as RoPE (p-RoPE with p = 0): every plane frozen, nothing to analyse."""
    if not np.any(theta > 0):
        raise CocaEvalError(
            f"no rotary plane rotates (NoPE): the {analysis} analysis has no meaning for this model"
        )


def ordered(by_layer: dict[int, Any]) -> list[Any]:
    """Values of a {layer: value} map in layer order (hooks fill it as layers run)."""
    return [by_layer[layer] for layer in sorted(by_layer)]
