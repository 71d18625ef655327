"""Options whose left-out value comes from a preset (``tasks/*.yaml``), and the values in force.

``--help`` shows each such option's preset value, and messages can say where a value came from, so
a user who gave no ``--lengths`` still knows which lengths ran and why. ``--preset`` is eager, so in
``coca-eval ppl --preset pg19 --help`` it is read before ``--help`` prints, and the help shows pg19's
values; without it (or with it after ``--help``) the help shows the command's default preset.
"""

from __future__ import annotations

import re

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


class PresetValuedOption(click.Option):
    """An option whose help shows the value of the preset in force (``--preset`` given before
    ``--help``, else the command's default preset).

    Its ``help`` may also be a function, called each time the help is shown: text that lists a
    registry (the ``--dataset`` forms) then names what plug-ins registered, which the text fixed when
    the command was defined would not, as plug-ins may load, and tests register, after that.
    """

    def __init__(self, *args, preset: str, task: str, key: str, **kwargs) -> None:
        self.help_text = kwargs.pop("help", None)
        super().__init__(*args, help=None if callable(self.help_text) else self.help_text, **kwargs)
        self.preset, self.task, self.key = preset, task, key

    def get_help_record(self, ctx: click.Context):
        """One default shown: the preset's where it sets the option, else the task's own, which a help
        text may state as ``[default: X]`` (never both: two defaults for one option read as a conflict)."""
        preset = ctx.params.get("preset") or self.preset
        self.show_default = preset_default(preset, self.task, self.key) or False
        text = self.help_text() if callable(self.help_text) else self.help_text
        if self.show_default and text:
            text = re.sub(r"\s*\[default: [^\]]*\]\s*$", "", text)
        self.help = text
        return super().get_help_record(ctx)


def preset_choice_option(preset: str, eager: bool = True):
    """The ``--preset`` option, ``eager`` so that a ``--help`` after it shows that preset's values."""
    return click.option(
        "--preset",
        default=preset,
        show_default=True,
        is_eager=eager,
        help="Task preset (see `coca-eval tasks`).",
    )


def preset_option_factory(preset: str, task: str):
    """``option(*names, key=..., **kwargs)``: a click option whose value, when left out, comes from
    ``preset``'s ``key`` (or the ``--preset`` given's); ``--help`` shows which."""

    def option(*names: str, key: str, **kwargs):
        return click.option(*names, cls=PresetValuedOption, preset=preset, task=task, key=key, **kwargs)

    return option


def preset_values(preset: str, task: str, overrides: dict) -> dict:
    """The preset's parameters with every option the user actually gave laid over them."""
    from coca_eval.presets import get_preset

    values = dict(get_preset(preset, task=task).params)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return values


def value_origins(preset: str, task: str, overrides: dict) -> dict[str, str]:
    """Where each parameter in force came from (``the command line`` or ``preset embedded``), for messages
    that quote a value the user may not know they were using; a key in neither is the task's default."""
    from coca_eval.presets import get_preset

    given = {k for k, v in overrides.items() if v is not None}
    origins = {k: f"preset {preset}" for k in get_preset(preset, task=task).params}
    return {**origins, **{k: "the command line" for k in given}}
