"""Decorator registries (the inspect_ai habit): tasks, model presets and rope patches register by name.

A registry is a plain name -> object map that refuses duplicates, so a typo in a plugin fails loudly
instead of silently shadowing a built-in entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from coca_eval.errors import CocaEvalError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind; ``kind`` only shapes error messages."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        if name in self._entries and self._entries[name] is not entry:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form: ``@TASKS.register("ppl")``."""
        return lambda entry: self.add(name, entry)

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise CocaEvalError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._entries.items())
