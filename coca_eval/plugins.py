"""Third-party plug-ins: the ``coca_eval.plugins`` entry-point group.

A distribution declares, in its ``pyproject.toml``::

    [project.entry-points."coca_eval.plugins"]
    my_task = "my_package.coca_plugin:register"

and ``register()`` adds its entries (``TASKS.add(...)``, ``BACKENDS.add(...)``, ...). An entry point may
also name a module, whose import does the registering. Plug-ins load once, on the first lookup in any
registry, so an installed plug-in costs nothing until a registry is asked for.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from coca_eval.errors import CocaEvalError

GROUP = "coca_eval.plugins"
_state = {"loaded": False}


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
    loaded = []
    for point in plugin_entry_points():
        try:
            target = point.load()
            if callable(target):
                target()
        except CocaEvalError:
            raise
        except Exception as exc:
            raise CocaEvalError(f"plug-in {point.name!r} ({point.value}) failed to load: {exc}") from None
        loaded.append(point.name)
    return loaded


def reset_plugins() -> None:
    """Forget that plug-ins were loaded (tests install fake distributions and load again)."""
    _state["loaded"] = False
