"""The backend registry: a name (``--backend``, a methods file's ``backend:``) -> how to load it.

Entries are lazy: ``loader`` is a ``"module:function"`` reference imported only when a method on that
backend loads, so listing backends (``--help``) imports neither torch nor an engine. A plug-in adds a
backend with ``BACKENDS.add("name", BackendEntry(...))`` from its ``coca_eval.plugins`` entry point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from coca_eval.registry import Registry, resolve


@dataclass(frozen=True)
class BackendRequest:
    """Everything a loader may need besides the method; nothing here changes a number."""

    device: str = "cpu"
    device_map: str | None = None
    engine: Any = None  # EngineOptions
    longest: int = 0  # the longest sequence the task runs (prompt plus new tokens)


@dataclass(frozen=True)
class SequenceNeed:
    """The longest sequence a run asks of its backends: its longest prompt and, past it, the most new
    tokens any of its prompts may generate (``total`` = both)."""

    prompt: int
    total: int

    @property
    def new_tokens(self) -> int:
        return self.total - self.prompt


@dataclass(frozen=True)
class BackendEntry:
    """``loader(method, request)`` returns a loaded backend; ``check(methods, engine)`` fails fast
    (before any model loads) when the backend cannot work here, and ``check_length(method, engine,
    need)`` when it cannot hold the run's longest sequence (a :class:`SequenceNeed`): an engine sized
    up front would otherwise cut answers short or fail mid-run. ``needs_weights=False`` says the
    backend never reads ``--model`` as weights (a plug-in's rule-based backend, say), so no run looks the
    model up, on disk or on the hub, to fingerprint it."""

    loader: str
    description: str
    check: Callable[[Sequence[Any], Any], None] | None = field(default=None, compare=False)
    check_length: Callable[[Any, Any, SequenceNeed], None] | None = field(default=None, compare=False)
    needs_weights: bool = True

    def load(self, method: Any, request: BackendRequest) -> Any:
        return resolve(self.loader)(method, request)


BACKENDS = Registry[BackendEntry]("backend", builtins=("coca_eval.backends.builtin",))
