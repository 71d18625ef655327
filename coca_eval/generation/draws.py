"""What a task family hands the prompt builder for one sample: the template's fields, the references,
and a function that fills the context to an exact token budget.

A family draws everything random about a sample first (keys, values, chains, words, the question),
because the question's length decides how many tokens the context gets; the builder then asks the
family for exactly that many.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from coca_eval.generation.haystacks import Essay
    from coca_eval.generation.segments import Encode, Pieces


class Kit(Protocol):
    """What a family's draw may use of the prompt builder: its tokenizer's pieces and the essay
    haystack (a family's own builder may offer more: RULER's QA sets)."""

    encode: Encode
    pieces: Pieces

    def essay(self) -> Essay: ...

    def haystack_name(self, task: Any) -> str: ...


@dataclass(frozen=True)
class SampleKey:
    """Which sample a family draws: its random generator is seeded from all of these."""

    seed: int
    length: int
    index: int
    attempt: int = 0  # a redraw's number (see ``Draw.redraw``)


@dataclass
class Context:
    """``ids`` is exactly the budget asked for; the first ``shared`` of them are the same for every
    sample of the task and length (haystack before the first needle), for KV-cache reuse."""

    ids: list[int]
    shared: int = 0
    detail: dict = field(default_factory=dict)
    answers: tuple[str, ...] | None = None  # references that depend on what fit (else the draw's)


@dataclass
class Draw:
    """One sample's random content.

    ``lead`` goes before the task's template (vt's and cwe's worked example, as RULER puts it);
    ``example`` is cwe's worked example as ``(user message, answer after the answer prefix)``: with a
    chat template RULER frames it as a turn of its own, answered, before the task's turn (vt's example
    stays raw text inside the task's turn, as RULER leaves it);
    ``prefix_shared`` says whether the text before the context is the same for every sample; ``redraw``
    that another draw may fit where this one does not (the builder then draws again).
    """

    fields: dict[str, str | int]
    answers: tuple[str, ...]
    fill: Callable[[int], Context]
    lead: str = ""
    example: tuple[str, str] | None = None
    prefix_shared: bool = True
    redraw: bool = False
