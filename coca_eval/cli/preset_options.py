"""Options whose left-out value comes from a preset (``tasks/*.yaml``), and the values in force.

``--help`` shows each such option's preset value, and messages can say where a value came from, so
a user who gave no ``--lengths`` still knows which lengths ran and why.
"""

from __future__ import annotations

import click

from coca_eval.errors import CocaEvalError


def preset_default(preset: str, task: str, key: str) -> str | None:
    """``preset embedded: 4``: what an option left out gets, shown in ``--help``."""
    from coca_eval.presets import get_preset

    try:
        value = get_preset(preset, task=task).params.get(key)
    except CocaEvalError:
        return None
    if value is None:
        return None
    shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
    return f"preset {preset}: {shown}"


def preset_option_factory(preset: str, task: str):
    """``option(*names, key=..., **kwargs)``: a click option whose value, when left out, comes from
    ``preset``'s ``key``; ``--help`` shows which."""

    def option(*names: str, key: str, **kwargs):
        return click.option(*names, show_default=preset_default(preset, task, key) or False, **kwargs)

    return option


def preset_values(preset: str, task: str, overrides: dict) -> dict:
    """The preset's parameters with every option the user actually gave laid over them."""
    from coca_eval.presets import get_preset

    values = dict(get_preset(preset, task=task).params)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return values


def value_origins(preset: str, task: str, overrides: dict) -> dict[str, str]:
    """Where each parameter in force came from (``the command line`` or ``preset zoo``), for messages
    that quote a value the user may not know they were using; a key in neither is the task's default."""
    from coca_eval.presets import get_preset

    given = {k for k, v in overrides.items() if v is not None}
    origins = {k: f"preset {preset}" for k in get_preset(preset, task=task).params}
    return {**origins, **{k: "the command line" for k in given}}
