"""The zoo's registrations, run by coca-eval's plug-in loader (the ``zoo`` entry point in pyproject.toml).

Registering imports no torch and reads no book: the command and the data source are lazy references,
and the model presets hash only the shipped ``zoo.json`` files. Every entry is built once, so loading
the plug-in again (as tests that reset the loader do) registers the very same objects.
"""

from __future__ import annotations

import functools

from coca_eval.cli.group import COMMANDS, CommandEntry
from coca_eval.data.sources import DATA_SOURCES, DataSource
from coca_eval.models.presets import MODEL_PRESETS, ModelPreset
from coca_eval.presets import DEFAULT_PRESETS
from coca_eval.registry import lazy

COMMAND = CommandEntry(
    "coca_eval.zoo.cli:zoo", "The miniature zoo: tiny models trained here, by position scheme."
)
DATA_SOURCE = DataSource(
    "zoo:SPLIT[:parts]",
    lazy("coca_eval.zoo.corpus:load_source"),
    check=lazy("coca_eval.zoo.corpus:check_source"),
)
# The showcase each command runs when no preset is named: the papers' Tables 1 and 2 in miniature.
DEFAULTS = {"ppl": "zoo", "passkey": "zoo-passkey"}


@functools.cache
def _model_presets() -> tuple[tuple[str, ModelPreset], ...]:
    from coca_eval.zoo.presets import zoo_presets

    return tuple(zoo_presets())


def register() -> None:
    COMMANDS.add("zoo", COMMAND)
    DATA_SOURCES.add("zoo:", DATA_SOURCE)
    for name, preset in _model_presets():
        MODEL_PRESETS.add(name, preset)
    for task, preset_name in DEFAULTS.items():
        DEFAULT_PRESETS.add(task, preset_name)
