"""Task presets: the papers' protocols as YAML data under ``tasks/`` (no logic lives there).

A preset names a registered task and its parameters, and may name the methods (rows) a run uses when
the user names none (the default run's rows, for example). Presets ship inside the wheel
(``coca_eval/_presets/tasks``) and are read from the checkout's ``tasks/`` in an editable install.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class TaskPreset:
    name: str
    task: str
    description: str
    params: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    methods: tuple[dict[str, Any], ...] = ()


def preset_dirs() -> list[Path]:
    """The packaged copy first (non-editable install), then the source checkout's ``tasks/``."""
    packaged = Path(str(resources.files("coca_eval"))) / "_presets" / "tasks"
    checkout = Path(__file__).resolve().parent.parent / "tasks"
    return [d for d in (packaged, checkout) if d.is_dir()]


def _read_preset(path: Path) -> TaskPreset:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return TaskPreset(
            raw["name"],
            raw["task"],
            raw.get("description", ""),
            dict(raw.get("params") or {}),
            path,
            tuple(raw.get("methods") or ()),
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise CocaEvalError(f"preset file {path} is malformed: {str(exc).splitlines()[0]}") from None


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
