"""Task presets: the papers' protocols as YAML data under ``tasks/`` (no logic lives there).

A preset names a registered task and its parameters, and may name the methods (rows) a run uses when
the user names none (the default run's rows, for example). Presets ship inside the wheel
(``coca_eval/_presets/tasks``) and are read from the checkout's ``tasks/`` in an editable install.
A plug-in ships its own presets in a directory of its package and registers that directory in
:data:`PRESET_DIRS`, so its presets (which name its models and datasets) come and go with it.

The preset a task's command runs when none is named is the command's own fallback, unless a plug-in
registered a showcase of its own in :data:`DEFAULT_PRESETS` (task name -> preset name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.registry import Registry

DEFAULT_PRESETS = Registry[str]("default preset")
# plug-in name -> a directory of its preset files (read after the core's, so a core name stays the core's)
PRESET_DIRS = Registry[Path]("preset directory")


def default_preset(task: str, fallback: str) -> str:
    """The preset ``task``'s command runs when none is named: a plug-in's, else ``fallback``."""
    return DEFAULT_PRESETS.get(task) if task in DEFAULT_PRESETS else fallback


@dataclass(frozen=True)
class TaskPreset:
    name: str
    task: str
    description: str
    params: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    methods: tuple[dict[str, Any], ...] = ()


def preset_dirs() -> list[Path]:
    """The packaged copy first (non-editable install), then the source checkout's ``tasks/``, then the
    directories plug-ins registered."""
    packaged = Path(str(resources.files("coca_eval"))) / "_presets" / "tasks"
    checkout = Path(__file__).resolve().parent.parent / "tasks"
    plugged = [PRESET_DIRS.get(name) for name in PRESET_DIRS.names()]
    return [d for d in (packaged, checkout, *plugged) if d.is_dir()]


class PresetFile(BaseModel):
    """A preset file's own keys; an unknown key is refused, since a misspelt ``param:`` would otherwise
    drop every parameter without a word. What ``params`` holds is the task's to check."""

    model_config = ConfigDict(extra="forbid")

    name: StrictStr
    task: StrictStr
    description: StrictStr = ""
    params: dict[str, Any] | None = None
    methods: list[dict[str, Any]] | None = None


def _first_problem(exc: ValidationError, prefix: str = "") -> str:
    """``params.seed: Input should be a valid integer (got 'x')``: the first error of a validation,
    one line (the CLI prints one line), with the field's dotted path so the user finds it in the file."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in (prefix, *error["loc"]) if part != "") or "the file"
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] not in ("missing", "value_error"):
        message += f" (got {error['input']!r:.60})"
    more = exc.error_count() - 1
    return f"{where}: {message}" + (f" (and {more} more problem(s))" if more else "")


def _params_schema(task: str) -> type[BaseModel] | None:
    """The pydantic model a registered task gives for its presets' params (None: nothing to check,
    as for a plug-in's task that is not installed)."""
    from coca_eval.registry import resolve
    from coca_eval.taskspec import TASKS

    if task not in TASKS or TASKS.get(task).preset_params is None:
        return None
    return resolve(TASKS.get(task).preset_params)


def _validated(path: Path, raw: Any) -> PresetFile:
    """The file's keys and the task's params checked by type, before any of them is used."""
    if not isinstance(raw, dict):
        shown = "nothing" if raw is None else f"a {type(raw).__name__}"
        raise CocaEvalError(f"preset file {path}: expected a mapping of name, task and params (got {shown})")
    try:
        preset = PresetFile.model_validate(raw)
    except ValidationError as exc:
        raise CocaEvalError(f"preset file {path}: {_first_problem(exc)}") from None
    schema = _params_schema(preset.task)
    if schema is not None:
        try:
            schema.model_validate(preset.params or {})
        except ValidationError as exc:
            raise CocaEvalError(f"preset file {path}: {_first_problem(exc, 'params')}") from None
    return preset


def _read_preset(path: Path) -> TaskPreset:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CocaEvalError(f"preset file {path} is malformed: {str(exc).splitlines()[0]}") from None
    preset = _validated(path, raw)
    params, methods = dict(preset.params or {}), tuple(preset.methods or ())
    return TaskPreset(preset.name, preset.task, preset.description, params, path, methods)


def list_presets() -> list[TaskPreset]:
    found: dict[str, TaskPreset] = {}
    for directory in preset_dirs():
        for path in sorted(directory.glob("*.yaml")):
            preset = _read_preset(path)
            found.setdefault(preset.name, preset)
    return sorted(found.values(), key=lambda p: (p.task, p.name))


def get_preset(name: str, task: str | None = None) -> TaskPreset:
    """A preset by name (or a path to a preset YAML file a user copied and edited)."""
    if name.endswith((".yaml", ".yml")) and Path(name).is_file():
        preset = _read_preset(Path(name))
    else:
        presets = {p.name: p for p in list_presets()}
        if name not in presets:
            raise CocaEvalError(f"unknown preset {name!r} (known: {', '.join(sorted(presets)) or 'none'})")
        preset = presets[name]
    if task is not None and preset.task != task:
        raise CocaEvalError(f"preset {preset.name!r} is for task {preset.task!r}, not {task!r}")
    return preset
