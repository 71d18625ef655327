"""Parameters of the passkey task, validated before any model loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import parse_lengths
from coca_eval.passkey.prompts import parse_depths
from coca_eval.passkey.templates import TEMPLATES


@dataclass(frozen=True)
class PasskeyParams:
    """Everything that changes a passkey number (``fast`` and the device do not)."""

    lengths: tuple[int, ...] = field(default=(512, 1024, 2048))
    samples: int = 100
    seed: int = 0
    max_new_tokens: int = 64
    depths: str = "stratified"
    template: str = "landmark"

    def identity(self) -> dict[str, Any]:
        return asdict(self)


def make_passkey_params(values: dict[str, Any]) -> PasskeyParams:
    values = dict(values)
    unknown = set(values) - set(PasskeyParams.__dataclass_fields__)
    if unknown:
        raise CocaEvalError(f"unknown passkey parameter(s): {', '.join(sorted(unknown))}")
    if isinstance(values.get("lengths"), str):
        values["lengths"] = tuple(parse_lengths(values["lengths"]))
    elif values.get("lengths") is not None:
        values["lengths"] = tuple(sorted({int(v) for v in values["lengths"]}))
    if values.get("depths") is not None:
        values["depths"] = str(values["depths"])
    params = PasskeyParams(**values)
    for name in ("samples", "max_new_tokens"):
        value = getattr(params, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CocaEvalError(f"--{name.replace('_', '-')} must be a positive integer (got {value!r})")
    parse_depths(params.depths)
    TEMPLATES.get(params.template)
    return params
