"""The zoo's registrations, run by coca-eval's plug-in loader (the ``zoo`` entry point in pyproject.toml).

Registering imports no torch and reads no book: the command and the data source are lazy references,
the model presets hash only the shipped ``zoo.json`` files, and the task presets are a directory whose
YAML files are read only when presets are looked up. Every entry is built once, so loading the plug-in
again (as tests that reset the loader do) registers the very same objects.
"""

from __future__ import annotations

import functools
from pathlib import Path

from coca_eval.cli.group import COMMANDS, CommandEntry
from coca_eval.data.sources import DATA_SOURCES, DataSource
from coca_eval.models.presets import MODEL_PRESETS, ModelPreset
from coca_eval.presets import DEFAULT_PRESETS, PRESET_DIRS
from coca_eval.registry import lazy

COMMAND = CommandEntry(
    "coca_eval.zoo.cli:zoo", "The miniature zoo: tiny models trained here, by position scheme."
)
DATA_SOURCE = DataSource(
    "zoo:SPLIT[:parts]",
    lazy("coca_eval.zoo.corpus:load_source"),
    check=lazy("coca_eval.zoo.corpus:check_source"),
)
# The task presets that run the zoo's models on its data, among them the showcases below.
PRESETS = Path(__file__).resolve().parent / "tasks"
# The showcase each command runs when no preset is named: the papers' Tables 1 and 2 in miniature.
DEFAULTS = {"ppl": "zoo", "passkey": "zoo-passkey"}


@functools.cache
def _model_presets() -> tuple[tuple[str, ModelPreset], ...]:
    from coca_eval.zoo.presets import zoo_presets

    return tuple(zoo_presets())


def register() -> None:
    COMMANDS.add("zoo", COMMAND)
    DATA_SOURCES.add("zoo:", DATA_SOURCE)
    PRESET_DIRS.add("zoo", PRESETS)
    for name, preset in _model_presets():
        MODEL_PRESETS.add(name, preset)
    for task, preset_name in DEFAULTS.items():
        DEFAULT_PRESETS.add(task, preset_name)
