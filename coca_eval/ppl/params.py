"""Parameters of the perplexity task, validated before any model loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import StrictInt, StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import check_shortest
from coca_eval.params import (
    PositiveCount,
    PresetLengths,
    PresetParams,
    normalise_task_values,
    require_choice,
    require_positive_int,
)
from coca_eval.ppl.windows import disjoint

MODES = ("sliding", "truncated")
BOS_CHOICES = ("auto", "always", "never", "first")


@dataclass(frozen=True)
class PplParams:
    """Everything that changes a perplexity number (batch size and device do not)."""

    dataset: str = "embedded"
    num_docs: int | None = 4
    doc_tokens: int = 4096
    lengths: tuple[int, ...] = field(default=(512, 1024, 2048))
    stride: int = 512
    mode: str = "sliding"
    bos: str = "auto"
    seed: int = 0
    limit: int | None = None
    text_field: str = "text"
    up_to_num_docs: bool = False  # num_docs is a ceiling: fewer qualifying documents are all used

    def effective_stride(self, length: int) -> int:
        """The stride windows of ``length`` advance by: the window length itself where they are disjoint
        (:func:`coca_eval.ppl.windows.disjoint`)."""
        return length if disjoint(self.stride, length) else self.stride

    def identity(self) -> dict[str, Any]:
        """The fields that change a number. ``up_to_num_docs`` is there only when set: an exact count
        keeps the identity (and journals) it always had, while a ceiling's cells, possibly over fewer
        documents, are never resumed as an exact count's."""
        values = asdict(self)
        if not self.up_to_num_docs:
            del values["up_to_num_docs"]
        return values


class PplPresetParams(PresetParams):
    """What a ppl preset file may set, in YAML's types (``lengths`` as the grammar or a list)."""

    dataset: StrictStr = None
    num_docs: PositiveCount | None = None  # null: every document that has doc_tokens tokens
    doc_tokens: PositiveCount = None
    lengths: PresetLengths = None
    stride: PositiveCount = None
    mode: Literal[MODES] = None
    bos: Literal[BOS_CHOICES] = None
    seed: StrictInt = None
    limit: PositiveCount | None = None
    text_field: StrictStr = None


def make_params(values: dict[str, Any]) -> PplParams:
    """Build and check :class:`PplParams` from preset values overlaid with command-line options."""
    values = normalise_task_values(values, PplParams.__dataclass_fields__, "ppl")
    params = PplParams(**values)
    for name in ("doc_tokens", "stride"):
        require_positive_int(f"--{name.replace('_', '-')}", getattr(params, name))
    require_positive_int("--num-docs", params.num_docs, allow_none=True)
    require_positive_int("--limit", params.limit, allow_none=True)
    require_choice("--mode", params.mode, MODES)
    require_choice("--bos", params.bos, BOS_CHOICES)
    check_shortest(params.lengths, "ppl", 2, "a window scores each token after its first")
    if max(params.lengths) > params.doc_tokens:
        raise CocaEvalError(
            f"length {max(params.lengths)} exceeds --doc-tokens {params.doc_tokens}: longer windows "
            "would silently be cut to the document; raise --doc-tokens"
        )
    return params
