"""Watching a model's attention one layer at a time: q and k where RoPE is applied, and the rotated
operands where attention is computed.

Two hooks, both undone on exit:

* ``on_rope(layer, module, q, k, cos, sin)``: the arguments of the layer's own
  ``apply_rotary_pos_emb``, i.e. after any q/k norm (Gemma 3) and before rotation. The function is
  swapped in the module that defines the attention's ``forward`` (LLaMA, Gemma 3, GPT-NeoX and the
  CoCA decoders each call their module's copy), so no model code is duplicated. For CoCA, ``k`` is
  the collinear coefficient t (and ``module.strict`` tells the query form).
* ``on_attention(layer, module, query, key, value, scaling, window)``: what the attention kernel
  receives (rotated; CoCA's q ∘ rope(q) and rope(t)), through transformers' ``sdpa`` entry, which the
  hf backend loads every model with.

A hook sees one layer's tensors and must reduce them before returning: nothing holds every layer's
activations, let alone every layer's N x N scores. :func:`observe` is what every analysis does
around one forward: hooks on, the decoder run, and a refusal when RoPE never rotated anything.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import numpy as np
import torch

from coca_eval.errors import CocaEvalError

RopeHook = Callable[[int, Any, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], None]
AttentionHook = Callable[..., None]


def attention_modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The self-attention modules, in layer order (each knows its ``layer_idx``)."""
    found = [
        m
        for m in model.modules()
        if "Attention" in type(m).__name__ and isinstance(getattr(m, "layer_idx", None), int)
    ]
    return sorted(found, key=lambda m: m.layer_idx)


def rope_modules(model: torch.nn.Module) -> list[Any]:
    """The Python modules whose ``apply_rotary_pos_emb`` the attention layers call: where the scores
    are computed (a swapped attention's ``attend``, :mod:`coca_eval.models.swapped`; else ``forward``)."""
    modules = {}
    for attention in attention_modules(model):
        scoring = getattr(type(attention), "attend", None) or type(attention).forward
        defining = sys.modules[scoring.__module__]
        if callable(getattr(defining, "apply_rotary_pos_emb", None)):
            modules[defining.__name__] = defining
    return list(modules.values())


def require_rope(model: torch.nn.Module, analysis: str) -> None:
    """One line instead of meaningless numbers for a model without rotary embeddings (ALiBi, NoPE)."""
    if not rope_modules(model):
        kind = model.config.get_text_config().model_type
        raise CocaEvalError(
            f"model type {kind!r} applies no rotary position embedding (ALiBi or NoPE): "
            f"the {analysis} analysis has no meaning for it"
        )


@contextmanager
def _patched(target: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, original)


def _rope_wrapper(original: Callable, state: dict, on_rope: RopeHook) -> Callable:
    def apply_rotary_pos_emb(q, k, cos, sin, *args, **kwargs):
        module = state["module"]
        on_rope(module.layer_idx, module, q, k, cos, sin)
        state["calls"] += 1
        return original(q, k, cos, sin, *args, **kwargs)

    return apply_rotary_pos_emb


def _attention_wrapper(original: Callable, on_attention: AttentionHook) -> Callable:
    def attention(module, query, key, value, attention_mask, *args, **kwargs):
        window = kwargs.get("sliding_window") or getattr(module, "sliding_window", None)
        scaling = kwargs.get("scaling") or getattr(module, "scaling", None) or query.shape[-1] ** -0.5
        on_attention(module.layer_idx, module, query, key, value, scaling, window)
        return original(module, query, key, value, attention_mask, *args, **kwargs)

    return attention


@contextmanager
def _sdpa_entry(on_attention: AttentionHook) -> Iterator[None]:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    from coca_eval.models.sdpa_swap import sdpa_swapped

    with sdpa_swapped(lambda previous: _attention_wrapper(previous or sdpa_attention_forward, on_attention)):
        yield


@contextmanager
def capture(
    model: torch.nn.Module,
    analysis: str,
    on_rope: RopeHook | None = None,
    on_attention: AttentionHook | None = None,
    on_layer_done: Callable[[], None] | None = None,
) -> Iterator[dict]:
    """Within the block, every forward of ``model`` calls the hooks layer by layer; yields a state
    whose ``calls`` counts rope applications (0 after a forward: the model rotated nothing)."""
    from coca_eval.kernels import use_coca_kernel

    require_rope(model, analysis)
    state: dict = {"module": None, "calls": 0}
    with ExitStack() as stack:
        stack.enter_context(use_coca_kernel("torch"))  # the fused kernel would bypass the rope call
        for attention in attention_modules(model):
            stack.callback(attention.register_forward_pre_hook(lambda m, *_: state.update(module=m)).remove)
            if on_layer_done is not None:
                stack.callback(attention.register_forward_hook(lambda *_: on_layer_done()).remove)
        if on_rope is not None:
            for module in rope_modules(model):
                wrapper = _rope_wrapper(module.apply_rotary_pos_emb, state, on_rope)
                stack.enter_context(_patched(module, "apply_rotary_pos_emb", wrapper))
        if on_attention is not None:
            stack.enter_context(_sdpa_entry(on_attention))
        yield state


@torch.inference_mode()
def run_decoder(backend: Any, ids: list[int]) -> None:
    """One forward of the decoder alone (no LM head: a 262k-word head would cost more than the layers)."""
    reset = getattr(backend, "reset_dynamic_rope", None)
    if reset is not None:
        reset()  # dynamic NTK sees this sequence's own length
    input_ids = torch.tensor([ids], device=backend.device)  # (1, n)
    backend.model.get_decoder()(input_ids=input_ids, use_cache=False)


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


def layer_lists(analysis: str, **by_layer: dict[int, Any]) -> dict[str, list[Any]]:
    """Each named {layer: value} map the hooks filled, in layer order (:func:`ordered`); the rotary
    frequencies among them (``theta``) must rotate some plane (:func:`require_rotation`)."""
    lists = {name: ordered(values) for name, values in by_layer.items()}
    if "theta" in lists:
        require_rotation(np.asarray(lists["theta"]), analysis)
    return lists
