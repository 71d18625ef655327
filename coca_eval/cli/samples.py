"""``--samples N|auto``: the sample-count option of the generation tasks (RULER; passkey has its own)."""

from __future__ import annotations

import click


class SampleCount(click.ParamType):
    """``--samples``: a whole number, or ``auto`` (sample in rounds until the stopping rule is met)."""

    name = "N|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor auto", param, ctx)
