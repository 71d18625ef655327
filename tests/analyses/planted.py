"""Tiny models with planted attention structure, saved as checkpoints the hf backend loads.

``plant`` edits a saved tiny LLaMA-shaped model: it rewrites chosen q/k projections and saves it back,
so each test states the structure it plants (constant vectors, a frequency band, a loud head).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from tiny_models import make_tiny_llama, sharpen_attention

HEAD_DIM = 16  # tiny models: hidden 64, 4 heads
PLANES = HEAD_DIM // 2


def plant(directory: Path, edit: Callable[[torch.nn.Module], None], **overrides) -> Path:
    """A tiny LLaMA (or ``model_class`` variant) at ``directory``, sharpened, then ``edit``-ed in place."""
    from transformers import AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types

    register_model_types()
    make_tiny_llama(directory, add_bos=False, **overrides)
    model = AutoModelForCausalLM.from_pretrained(directory)
    sharpen_attention(model)
    with torch.no_grad():
        edit(model)
    model.save_pretrained(directory)
    return directory


def constant_qk(q_planes: torch.Tensor, k_planes: torch.Tensor) -> Callable[[torch.nn.Module], None]:
    """q and k the same in every token: weights 0, biases = the given (P,) complex plane values, laid out
    rotate-half (real parts in dims 0..P-1, imaginary in P..2P-1), for every head of every layer."""

    def layout(planes: torch.Tensor, heads: int) -> torch.Tensor:
        one = torch.cat([planes.real, planes.imag]).float()  # (d,)
        return one.repeat(heads)  # (heads * d,)

    def edit(model: torch.nn.Module) -> None:
        for layer in model.model.layers:
            attn = layer.self_attn
            for proj, planes in ((attn.q_proj, q_planes), (attn.k_proj, k_planes)):
                proj.weight.zero_()
                proj.bias.copy_(layout(planes, proj.weight.shape[0] // HEAD_DIM))

    return edit


def band_only(band: list[int]) -> Callable[[torch.nn.Module], None]:
    """q and k (and CoCA's t) carry signal only in the planes of ``band``: the other rows are zeroed."""
    keep = torch.zeros(HEAD_DIM, dtype=torch.bool)
    keep[band] = True
    keep[[j + PLANES for j in band]] = True

    def edit(model: torch.nn.Module) -> None:
        for layer in model.model.layers:
            attn = layer.self_attn
            for proj in (attn.q_proj, getattr(attn, "k_proj", None) or attn.t_proj):
                rows = proj.weight.view(-1, HEAD_DIM, proj.weight.shape[1])  # (heads, d, hidden)
                rows[:, ~keep] = 0.0

    return edit


def loud_head(layer: int, head: int, factor: float) -> Callable[[torch.nn.Module], None]:
    """One head's queries scaled by ``factor``: its logits (and their maximum) grow by that much."""

    def edit(model: torch.nn.Module) -> None:
        q = model.model.layers[layer].self_attn.q_proj.weight.view(-1, HEAD_DIM, model.config.hidden_size)
        q[head] *= factor

    return edit
