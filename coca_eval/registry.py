"""Decorator registries (the inspect_ai habit): tasks, backends, rope patches, templates, model presets.

A registry is a plain name -> object map that refuses duplicates, so a typo in a plugin fails loudly
instead of silently shadowing a built-in entry. A registry may name the modules that fill it
(``builtins``): they are imported on the first lookup, together with the third-party plug-ins of the
``coca_eval.plugins`` entry-point group, so listing a registry never costs more than those imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from coca_eval.errors import CocaEvalError
from coca_eval.plugins import REGISTRIES, DuplicateEntry, load_plugins, loading_plugins

T = TypeVar("T")


def resolve(target: str) -> Any:
    """The object a lazy ``"package.module:attr"`` reference names (imported now, not before)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"a lazy reference looks like 'package.module:attr' (got {target!r})")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Named entries of one kind; ``kind`` only shapes error messages."""

    def __init__(self, kind: str, builtins: Sequence[str] = (), first: Sequence[str] = ()) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self.builtins = list(builtins)  # modules that fill it; another package appends its own
        self.first = tuple(first)  # names listed first, in this order, whichever module was imported first
        self._loaded = False
        REGISTRIES.append(self)

    def add(self, name: str, entry: T) -> T:
        if loading_plugins() and not self._loaded:
            self._ensure_loaded()  # the built-in names first, so a plug-in can never take one of them
        if name in self._entries and self._entries[name] is not entry:
            raise DuplicateEntry(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def load_builtins(self) -> None:
        """Import the modules that fill this registry (plug-ins then cannot take their names)."""
        if not self._loaded:
            self._loaded = True
            for module in self.builtins:
                importlib.import_module(module)

    def snapshot(self) -> set[str]:
        return set(self._entries)

    def restore(self, names: set[str]) -> None:
        """Drop every entry added since :meth:`snapshot` returned ``names`` (a refused plug-in's)."""
        for name in [name for name in self._entries if name not in names]:
            del self._entries[name]

    def remove(self, name: str) -> T:
        """Take an entry out again (a test's temporary task, a plug-in being replaced)."""
        return self._entries.pop(name)

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form: ``@TEMPLATES.register("mine")``."""
        return lambda entry: self.add(name, entry)

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self.load_builtins()
        load_plugins()

    def get(self, name: str) -> T:
        self._ensure_loaded()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise CocaEvalError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def names(self) -> list[str]:
        """``first`` in its order, then registration order: the order choice lists and listings show."""
        self._ensure_loaded()
        pinned = [name for name in self.first if name in self._entries]
        return pinned + [name for name in self._entries if name not in self.first]

    def __contains__(self, name: object) -> bool:
        self._ensure_loaded()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.names()))

    def items(self) -> list[tuple[str, T]]:
        """Sorted by name (listings); :meth:`names` keeps registration order (choice lists)."""
        self._ensure_loaded()
        return sorted(self._entries.items())


def lazy(target: str) -> Callable[..., Any]:
    """A function that imports ``"module:attr"`` on its first call and calls it: task specs name their
    hooks this way so registering a task (``coca-eval --help`` does) imports none of its code."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return resolve(target)(*args, **kwargs)

    call.__qualname__ = call.__name__ = target
    return call
