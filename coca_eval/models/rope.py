"""Position patches applied at evaluation time: PI, (dynamic) NTK, YaRN and rope-theta overrides.

A patch is written ``kind:value`` (``linear:4``, ``dynamic:2``, ``ntk:8``, ``yarn:4``, ``base:500000``)
or ``none``. It edits the model config's rope parameters before the weights load, so the model's own
rotary code does the work; attention variants such as CoCA rotate q and t through the same code.

Models with several rope tables (Gemma 3 keeps one for sliding-window and one for global layers) are
patched on the global ("full_attention") table only: sliding layers never see distances beyond their
window, which is how those models are extended in practice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError

_KINDS = {
    "linear": "PI",
    "dynamic": "dynamic NTK",
    "ntk": "NTK",
    "yarn": "YaRN",
    "base": "base",
}
_SPEC = re.compile(r"^(?P<kind>[a-z]+):(?P<value>\d+(\.\d+)?(e\d+)?)$")


@dataclass(frozen=True)
class RopePatch:
    """One parsed patch; ``kind == 'none'`` leaves the model as trained."""

    kind: str = "none"
    value: float = 1.0

    @property
    def spec(self) -> str:
        return "none" if self.kind == "none" else f"{self.kind}:{self.value:g}"

    @property
    def label(self) -> str:
        """Human label for table rows, e.g. ``dynamic NTK x4``."""
        if self.kind == "none":
            return ""
        if self.kind == "base":
            return f"theta={self.value:g}"
        return f"{_KINDS[self.kind]} x{self.value:g}"


def parse_rope(spec: str | None) -> RopePatch:
    """Parse ``--rope``; anything malformed is a usage error."""
    text = (spec or "none").strip().lower()
    if text in ("none", ""):
        return RopePatch()
    match = _SPEC.match(text)
    if not match or match["kind"] not in _KINDS:
        kinds = ", ".join(f"{k}:F" for k in _KINDS if k != "base")
        raise CocaEvalError(f"invalid rope patch {spec!r}: expected none, {kinds} or base:THETA")
    value = float(match["value"])
    if value <= 0 or (match["kind"] != "base" and value < 1):
        raise CocaEvalError(f"invalid rope patch {spec!r}: the factor must be >= 1 (theta > 0)")
    return RopePatch(match["kind"], value)


def _rotary_dim(config: Any, table: dict) -> int:
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return int(head_dim * table.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", 1.0)))


def _patched_table(patch: RopePatch, table: dict, config: Any) -> dict:
    theta = table["rope_theta"]
    trained = table.get("original_max_position_embeddings", config.max_position_embeddings)
    out = {k: v for k, v in table.items() if k in ("rope_theta", "partial_rotary_factor")}
    if patch.kind == "base":
        return {**out, "rope_type": "default", "rope_theta": patch.value}
    if patch.kind == "ntk":  # fixed NTK-aware: stretch the base so the lowest frequency slows by ~factor
        dim = _rotary_dim(config, table)
        return {**out, "rope_type": "default", "rope_theta": theta * patch.value ** (dim / (dim - 2))}
    rope_type = {"linear": "linear", "dynamic": "dynamic", "yarn": "yarn"}[patch.kind]
    patched = {**out, "rope_type": rope_type, "factor": patch.value}
    if rope_type == "yarn":
        patched["original_max_position_embeddings"] = trained
    return patched


def apply_rope_patch(config: Any, patch: RopePatch) -> Any:
    """Return ``config`` with its rope parameters patched (transformers >= 5 ``rope_parameters``)."""
    if patch.kind == "none":
        return config
    if getattr(config.get_text_config(), "alibi", False):  # alibi_llama, Falcon with alibi
        raise CocaEvalError(f"ALiBi has no rotary embedding to patch: --rope {patch.spec} needs a RoPE model")
    params = getattr(config, "rope_parameters", None)
    if not isinstance(params, dict):
        raise CocaEvalError(f"model type {config.model_type!r} has no rope parameters to patch")
    if "rope_theta" in params:
        config.rope_parameters = _patched_table(patch, params, config)
    elif "full_attention" in params:
        config.rope_parameters = {
            **params,
            "full_attention": _patched_table(patch, params["full_attention"], config),
        }
    else:
        raise CocaEvalError(f"cannot find the rope table of model type {config.model_type!r}")
    return config


def check_rope_patches(methods: Iterable[Any]) -> None:
    """Refuse, before any model loads, a patch that cannot apply (``--rope dynamic:2`` on an ALiBi model),
    for local checkpoints whose config reads without weights; others are checked when they load."""
    from transformers import AutoConfig

    for method in methods:
        directory = Path(method.model).expanduser()
        if method.rope.kind == "none" or not (directory / "config.json").is_file():
            continue
        try:
            config = AutoConfig.from_pretrained(directory)
        except (OSError, ValueError, KeyError):
            continue  # loading reports it, in the backend's own words
        apply_rope_patch(config, method.rope)
