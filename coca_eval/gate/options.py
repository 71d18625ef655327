"""Gate options: tolerances, significance level and bootstrap settings, validated from command-line text."""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class GateOptions:
    """Tolerances: ``max_ppl_rise`` is relative (0.02 = 2 %), ``max_acc_drop`` in points (5 = 5 points
    on the 0-100 scale of every accuracy-like score: passkey's and every generation family's)."""

    max_ppl_rise: float = 0.02
    max_acc_drop: float = 5.0
    alpha: float = 0.05
    seed: int = 0
    n_boot: int = 5000
    require_power: bool = False  # an inconclusive cell (one that could not show a drop) fails the gate


def parse_fraction(text: str | float, option: str) -> float:
    """``2%`` or ``0.02`` -> 0.02: tolerances read naturally either way on a command line."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        raise CocaEvalError(f"{option} must be a number or a percentage such as 2% (got {raw!r})") from None
    if not 0.0 <= value < 1.0 or value != value:
        raise CocaEvalError(f"{option} must be between 0 and 1 (or 0% and 100%), got {raw!r}")
    return value


def parse_points(text: str | float, option: str) -> float:
    """``5`` or ``5%`` (percentage points) -> 5.0: a drop in points on the 0-100 scale of the scores.

    A number between 0 and 1 without ``%`` is how the option read when passkey printed fractions
    (``0.05`` for five points): it is refused with the number it likely means, not taken as a twentieth
    of a point. A tolerance under one point is written with ``%`` (``0.5%``)."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) if raw.endswith("%") else float(raw)
    except ValueError:
        raise CocaEvalError(f"{option} must be a number of points such as 5 (got {raw!r})") from None
    if not 0.0 <= value < 100.0 or value != value:
        raise CocaEvalError(f"{option} is in points and must be between 0 and 100, got {raw!r}")
    if 0.0 < value < 1.0 and not raw.endswith("%"):
        raise CocaEvalError(
            f"{option} is in points (0-100, as the scores print): {raw} reads as a fraction; did you mean "
            f"{100 * value:g}? (under one point, write it with %: {raw}%)"
        )
    return value


def make_options(
    max_ppl_rise: str, max_acc_drop: str, alpha: float, seed: int, n_boot: int, require_power: bool = False
) -> GateOptions:
    """Validated options from command-line text; every problem is one line, exit code 2."""
    if not 0.0 < alpha < 1.0:
        raise CocaEvalError(f"--alpha must be between 0 and 1 (got {alpha})")
    if n_boot < 100:
        raise CocaEvalError(f"--bootstrap must be at least 100 (got {n_boot})")
    return GateOptions(
        parse_fraction(max_ppl_rise, "--max-ppl-rise"),
        parse_points(max_acc_drop, "--max-acc-drop"),
        alpha,
        seed,
        n_boot,
        require_power,
    )
