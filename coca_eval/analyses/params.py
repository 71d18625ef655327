"""Parameters of the analyses, validated before any model loads.

One dataclass serves the four analyses; each names the fields that change its numbers
(:data:`FIELDS`), so a journal key never depends on an option the analysis ignores.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import check_shortest
from coca_eval.params import normalise_task_values, require_positive_int

COMMON = ("dataset", "num_docs", "lengths", "seed", "text_field")
FIELDS = {
    "frequencies": (*COMMON, "layers"),
    "angles": (*COMMON, "pairs"),
    "decay": (*COMMON, "samples", "random_bound"),
    "attention": (*COMMON, "near", "last_rows", "outlier_ratio"),
}


@dataclass(frozen=True)
class AnalysisParams:
    """Documents to read (the first ``length`` tokens of ``num_docs`` sampled ones, per length) and the
    knobs of each analysis."""

    analysis: str
    dataset: str = "embedded"
    num_docs: int = 2
    lengths: tuple[int, ...] = (2048,)
    seed: int = 0
    text_field: str = "text"
    layers: tuple[int, ...] | None = None  # frequencies: per-head maps of these (default first, middle, last)
    pairs: int = 4096  # angles: sampled (query, key) position pairs per document and layer
    samples: int = 256  # decay: Gaussian (q, k) draws
    random_bound: int | None = None  # decay: L of random positions (default 4 x length)
    near: int = 500  # attention: the "last 500 tokens" of CoCA v1 §4.5
    last_rows: int = 32  # attention: query rows whose local mass is averaged
    outlier_ratio: float = (
        5.0  # attention: a head whose max logit is this many times the median is an outlier
    )

    @property
    def doc_tokens(self) -> int:
        return max(self.lengths)

    def identity(self) -> dict[str, Any]:
        """The fields that change this analysis' numbers."""
        values = asdict(self)
        return {"analysis": self.analysis, **{k: values[k] for k in FIELDS[self.analysis]}}


def make_params(analysis: str, values: dict[str, Any]) -> AnalysisParams:
    """Build and check :class:`AnalysisParams` from command-line (or preset) values."""
    values = normalise_task_values(values, AnalysisParams.__dataclass_fields__, analysis)
    values = {k: v for k, v in values.items() if v is not None}
    if values.get("layers") is not None:
        values["layers"] = parse_layers(values["layers"])
    params = AnalysisParams(analysis=analysis, **values)
    for name in ("num_docs", "pairs", "samples", "near", "last_rows"):
        require_positive_int(f"--{name.replace('_', '-')}", getattr(params, name))
    if not 1 < params.outlier_ratio < math.inf:  # at most 1, the median head itself is an "outlier"
        raise CocaEvalError(f"--outlier-ratio must be a number above 1 (got {params.outlier_ratio:g})")
    check_shortest(params.lengths, analysis, 2, "a query needs a key before it")
    if params.random_bound is not None and params.random_bound < max(params.lengths):
        raise CocaEvalError(
            "--random-bound must be at least the longest length (positions are drawn from 1..L)"
        )
    if any(layer < 0 for layer in params.layers or ()):
        raise CocaEvalError("--layers are 0-based layer indices")
    return params


def parse_layers(value: str | int | list | tuple) -> tuple[int, ...]:
    """``0,5,17`` (or a list of ints) -> sorted unique 0-based layer indices."""
    parts = (
        value.split(",") if isinstance(value, str) else value if isinstance(value, list | tuple) else [value]
    )
    try:
        return tuple(sorted({int(part) for part in parts}))
    except (TypeError, ValueError):
        raise CocaEvalError(f"--layers takes comma-separated layer indices (got {value!r})") from None
