"""Methods: the rows of a paper table (model + position patch + label).

``--model`` and ``--rope`` may each repeat; every model is paired with every patch. Long lists live in
a methods file (YAML, ``methods: [{model, rope, label, dtype, backend}, ...]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from coca_eval.backends.registry import BACKENDS
from coca_eval.errors import CocaEvalError
from coca_eval.files import read_utf8
from coca_eval.models.rope import RopePatch, parse_rope

DTYPES = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class MethodSpec:
    """One row: which weights, which patch, how to run them, and what to call the row."""

    model: str
    label: str
    rope: RopePatch = field(default_factory=RopePatch)
    dtype: str = "float32"
    backend: str = "hf"

    def identity(self) -> dict[str, Any]:
        """What changes numbers (the label does not)."""
        return {"model": self.model, "rope": self.rope.spec, "dtype": self.dtype, "backend": self.backend}


class _MethodEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str
    rope: str = "none"
    label: str | None = None
    dtype: str | None = None
    backend: str | None = None


def default_label(model: str, rope: RopePatch) -> str:
    """``SmolLM2-135M + dynamic NTK x4``: preset display name (or directory name) plus the patch, or the
    row name a paper gives the preset under that patch (``RoFormer + dynamic NTK & CoCA``)."""
    from coca_eval.models.presets import MODEL_PRESETS

    preset = MODEL_PRESETS.get(model) if model in MODEL_PRESETS else None
    if preset is not None and rope.spec in preset.rope_labels:
        return preset.rope_labels[rope.spec]  # the paper's row name, as the presets label it
    base = preset.display_name if preset is not None else Path(model.rstrip("/")).name
    return f"{base} + {rope.label}" if rope.label else base


def make_method(model: str, rope: str, label: str | None, dtype: str, backend: str) -> MethodSpec:
    if dtype not in DTYPES:
        raise CocaEvalError(f"unknown dtype {dtype!r} (choose from {', '.join(DTYPES)})")
    if backend not in BACKENDS:
        raise CocaEvalError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS.names())})")
    patch = parse_rope(rope)
    return MethodSpec(model, label or default_label(model, patch), patch, dtype, backend)


def load_methods_file(path: Path, dtype: str, backend: str) -> list[MethodSpec]:
    try:
        raw = yaml.safe_load(read_utf8(path, f"methods file {path}"))
    except FileNotFoundError:
        raise CocaEvalError(f"methods file not found: {path}") from None
    except (OSError, yaml.YAMLError) as exc:
        raise CocaEvalError(f"cannot read methods file {path}: {str(exc).splitlines()[0]}") from None
    entries = raw.get("methods") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CocaEvalError(f"methods file {path} needs a non-empty 'methods:' list")
    return methods_from_entries(entries, f"methods file {path}", dtype, backend)


def methods_from_entries(entries: list | tuple, where: str, dtype: str, backend: str) -> list[MethodSpec]:
    """``{model, rope, label, dtype, backend}`` dicts (a methods file's or a preset's) as methods."""
    try:
        parsed = [_MethodEntry.model_validate(e) for e in entries]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CocaEvalError(f"{where}: {first['loc']} {first['msg']}") from None
    return [make_method(e.model, e.rope, e.label, e.dtype or dtype, e.backend or backend) for e in parsed]


def build_methods(
    models: list[str],
    ropes: list[str],
    methods_file: Path | None,
    dtype: str,
    backend: str,
    preset_methods: tuple[dict, ...] = (),
) -> list[MethodSpec]:
    """Every ``--model`` with every ``--rope``, then the methods file's rows; labels must be unique.

    With neither ``--model`` nor ``--methods``, the preset's own rows apply (``preset_methods``)."""
    methods = [make_method(m, r, None, dtype, backend) for m in models for r in (ropes or ["none"])]
    if methods_file is not None:
        methods += load_methods_file(methods_file, dtype, backend)
    if not methods and preset_methods:
        if ropes:
            raise CocaEvalError("--rope needs --model: the preset's rows carry their own position patches")
        methods = methods_from_entries(preset_methods, "preset methods", dtype, backend)
    labels = [m.label for m in methods]
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise CocaEvalError(f"two methods share the label {duplicates[0]!r}; give one an explicit label")
    if not methods:
        raise CocaEvalError("no methods to evaluate: pass --model or --methods FILE")
    return methods
