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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.registry import Registry


@dataclass(frozen=True)
class RopeKind:
    """One kind of patch: its row label, and how it rewrites one rope table.

    ``table(value, theta, rotary_dim, trained)`` returns the rope entries to set (``rope_type`` and its
    parameters); ``min_value`` is the smallest value that makes sense (a factor below 1 shrinks context).
    """

    label: str
    table: Callable[[float, float, int, int], dict]
    min_value: float = 1.0
    value_name: str = "F"


ROPE_PATCHES = Registry[RopeKind]("rope patch")
ROPE_PATCHES.add(
    "linear", RopeKind("PI", lambda f, theta, dim, trained: {"rope_type": "linear", "factor": f})
)
ROPE_PATCHES.add(
    "dynamic", RopeKind("dynamic NTK", lambda f, theta, dim, trained: {"rope_type": "dynamic", "factor": f})
)
ROPE_PATCHES.add(  # fixed NTK-aware: stretch the base so the lowest frequency slows by ~factor
    "ntk",
    RopeKind(
        "NTK",
        lambda f, theta, dim, trained: {"rope_type": "default", "rope_theta": theta * f ** (dim / (dim - 2))},
    ),
)
ROPE_PATCHES.add(
    "yarn",
    RopeKind(
        "YaRN",
        lambda f, theta, dim, trained: {
            "rope_type": "yarn",
            "factor": f,
            "original_max_position_embeddings": trained,
        },
    ),
)
ROPE_PATCHES.add(
    "base",
    RopeKind("theta", lambda v, theta, dim, trained: {"rope_type": "default", "rope_theta": v}, 0.0, "THETA"),
)
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
        kind = ROPE_PATCHES.get(self.kind)
        return (
            f"{kind.label}={self.value:g}" if kind.value_name == "THETA" else f"{kind.label} x{self.value:g}"
        )


def parse_rope(spec: str | None) -> RopePatch:
    """Parse ``--rope``; anything malformed is a usage error."""
    text = (spec or "none").strip().lower()
    if text in ("none", ""):
        return RopePatch()
    match = _SPEC.match(text)
    if not match or match["kind"] not in ROPE_PATCHES:
        raise CocaEvalError(f"invalid rope patch {spec!r}: expected {rope_choices()}")
    value, kind = float(match["value"]), ROPE_PATCHES.get(match["kind"])
    if value <= 0 or value < kind.min_value:
        raise CocaEvalError(f"invalid rope patch {spec!r}: the factor must be >= 1 (theta > 0)")
    return RopePatch(match["kind"], value)


def rope_choices() -> str:
    """``none, linear:F, dynamic:F, ...``: what ``--rope`` accepts (its help and its errors say so)."""
    return ", ".join(
        ["none", *(f"{name}:{ROPE_PATCHES.get(name).value_name}" for name in ROPE_PATCHES.names())]
    )


def _rotary_dim(config: Any, table: dict) -> int:
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return int(head_dim * table.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", 1.0)))


def _patched_table(patch: RopePatch, table: dict, config: Any) -> dict:
    theta = table["rope_theta"]
    trained = table.get("original_max_position_embeddings", config.max_position_embeddings)
    out = {k: v for k, v in table.items() if k in ("rope_theta", "partial_rotary_factor")}
    kind = ROPE_PATCHES.get(patch.kind)
    return {**out, **kind.table(patch.value, theta, _rotary_dim(config, table), trained)}


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
    for every row whose config reads without weights (local checkpoints, presets shipped with weights);
    others are checked when they load."""
    from transformers import AutoConfig

    from coca_eval.models.registration import register_model_types

    register_model_types()  # the project's own model types (ALiBi among them) must read as what they are
    for method in methods:
        directory = _config_dir(method.model)
        if method.rope.kind == "none" or directory is None:
            continue
        try:
            config = AutoConfig.from_pretrained(directory, trust_remote_code=False)
        except (OSError, ValueError, KeyError):
            continue  # loading reports it, in the backend's own words
        try:
            apply_rope_patch(config, method.rope)
        except CocaEvalError as exc:
            raise CocaEvalError(f"{method.label} ({method.model}): {exc}") from None


def _config_dir(model: str) -> Path | None:
    """Where a method's ``config.json`` already is on disk: a local checkpoint, or the shipped copy of a
    preset that ships its weights (its ``config_dir``); presets that would be converted or downloaded
    first are checked when they load."""
    from coca_eval.models.presets import MODEL_PRESETS

    if model in MODEL_PRESETS:  # a preset name wins over a directory of that name, as when loading
        config_dir = MODEL_PRESETS.get(model).config_dir
        return None if config_dir is None else config_dir()
    directory = Path(model).expanduser()
    return directory if (directory / "config.json").is_file() else None
