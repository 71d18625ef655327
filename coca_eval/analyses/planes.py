"""The 2-D rotation planes of transformers' "rotate half" RoPE layout.

transformers rotates dimension j together with j + rot/2 (not 2j with 2j+1 as the papers write it), by
the angle position x theta_j, with theta_0 the highest frequency. Viewing plane j as the complex number
x_j + i x_{j+rot/2} makes RoPE a multiplication by exp(i position theta_j), so norms, phases and angles
between a query and a key are plain complex arithmetic on the tensors returned here.
"""

from __future__ import annotations

import torch


def plane_count(cos: torch.Tensor) -> int:
    """Rotary planes of a layer: half the rotary width (less than head_dim/2 under partial rotary)."""
    return cos.shape[-1] // 2


def as_complex(x: torch.Tensor, planes: int) -> torch.Tensor:
    """(..., d) real -> (..., planes) complex: plane j is x_j + i x_{j+planes}; dims past the rotary
    width (GPT-NeoX's ``rotary_pct``) are left out."""
    real = x[..., :planes].float()  # (..., P)
    imag = x[..., planes : 2 * planes].float()  # (..., P)
    return torch.complex(real, imag)  # (..., P)


def chunk_norms(x: torch.Tensor, planes: int) -> torch.Tensor:
    """Mean 2-norm of each plane over tokens: (b, h, n, d) -> (h, P), the quantity of the p-RoPE
    paper's Fig 3, 4 and 10 (batch and tokens averaged)."""
    return as_complex(x, planes).abs().mean(dim=(0, 2))  # (h, P)


def frequencies_of(cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """theta_j read off the model's own table at positions 0 and 1, so every rope type (PI, NTK, YaRN,
    dynamic at this length, p-RoPE's frozen planes) is seen as the layer really applies it.

    cos/sin (b, n, rot) -> (P,) in radians per token; frozen planes (p-RoPE) give 0.
    """
    planes = plane_count(cos)
    angle = torch.atan2(sin[0, :2, :planes].double(), cos[0, :2, :planes].double())  # (2, P)
    return (angle[1] - angle[0]).remainder(2 * torch.pi)  # (P,)


def attention_scaling(cos: torch.Tensor, sin: torch.Tensor) -> float:
    """The factor the rope folds into cos and sin (YaRN's mscale; 1 otherwise)."""
    return float(torch.hypot(cos[0, 0, 0], sin[0, 0, 0]))


def repeat_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(b, kv, n, d) -> (b, heads, n, d): grouped-query keys lined up with their query heads."""
    return x.repeat_interleave(heads // x.shape[1], dim=1)  # (b, h, n, d)
