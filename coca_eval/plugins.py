"""Third-party plug-ins: the ``coca_eval.plugins`` entry-point group.

A distribution declares, in its ``pyproject.toml``::

    [project.entry-points."coca_eval.plugins"]
    my_task = "my_package.coca_plugin:register"

and ``register()`` adds its entries (``TASKS.add(...)``, ``BACKENDS.add(...)``, ...). An entry point may
also name a module, whose import does the registering. Plug-ins load once, on the first lookup in any
registry, so an installed plug-in costs nothing until a registry is asked for.

A plug-in that registers a name already taken (a built-in command such as ``report``, another plug-in's
task) is refused: everything it registered is taken out again, one line on stderr names it, and every
other command keeps working. Built-in entries are loaded before any plug-in runs, so a plug-in can
never shadow one, whatever order the registries are first asked in.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

from coca_eval.errors import CocaEvalError


class UndoableRegistry(Protocol):
    """What plug-in loading needs of a registry (:class:`coca_eval.registry.Registry` is one): load its
    built-ins, and take and restore a snapshot to undo a refused plug-in's additions. A protocol, so
    this module names no registry type and the registries can import it."""

    def load_builtins(self) -> None: ...

    def snapshot(self) -> Any: ...

    def restore(self, snapshot: Any) -> None: ...


GROUP = "coca_eval.plugins"
# The modules holding the core's registries: imported (with their built-in entries) before any plug-in
# runs, so each plug-in's additions can be told apart from built-ins and undone if it is refused.
REGISTRY_MODULES = (
    "coca_eval.taskspec",
    "coca_eval.backends.registry",
    "coca_eval.models.rope",
    "coca_eval.models.presets",
    "coca_eval.passkey.templates",
    "coca_eval.data.sources",
    "coca_eval.presets",
    "coca_eval.cli.group",
)
_state = {"loaded": False, "loading": False}
# Every registry made so far (each adds itself), for plug-in loading to check and undo. It lives here, not
# in coca_eval.registry, so that the registries call the loader without the loader importing them back.
REGISTRIES: list[UndoableRegistry] = []


class DuplicateEntry(ValueError):
    """A name that a registry already holds for another entry (a plug-in that takes it is refused)."""


def plugin_entry_points() -> list[EntryPoint]:
    """The installed distributions' entry points of :data:`GROUP` (a seam tests replace)."""
    return list(entry_points(group=GROUP))


def load_plugins() -> list[str]:
    """Import every plug-in once and call it when it is callable; returns the names loaded now.

    A broken plug-in is a one-line error naming it, not a traceback from deep inside a registry.
    """
    if _state["loaded"]:
        return []
    _state["loaded"] = True
    points = plugin_entry_points()
    if points:
        for module in REGISTRY_MODULES:
            importlib.import_module(module)
        for registry in list(REGISTRIES):
            registry.load_builtins()
    loaded = []
    for point in points:
        before = {registry: registry.snapshot() for registry in REGISTRIES}
        _state["loading"] = True
        try:
            target = point.load()
            if callable(target):
                target()
        except DuplicateEntry as exc:
            for registry, names in before.items():
                registry.restore(names)
            print(
                f"coca-eval: warning: plug-in {point.name!r} ({point.value}) refused: {exc}", file=sys.stderr
            )
            continue
        except CocaEvalError:
            raise
        except Exception as exc:
            raise CocaEvalError(f"plug-in {point.name!r} ({point.value}) failed to load: {exc}") from None
        finally:
            _state["loading"] = False
        loaded.append(point.name)
    return loaded


def loading_plugins() -> bool:
    """Whether a plug-in is registering its entries right now."""
    return _state["loading"]


def reset_plugins() -> None:
    """Forget that plug-ins were loaded (tests install fake distributions and load again)."""
    _state["loaded"] = False
