"""Report definitions: which rows form which group, display names, the paper table to set beside ours.

A definition is a small YAML file (``reports/definitions/*.yaml`` ships a few); any field may also come
from the command line, which wins. Definitions ship in the wheel next to the task presets.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coca_eval.errors import CocaEvalError

FORMATS = ("md", "latex", "csv", "html")


class GroupSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    methods: list[str]


class ReportDefinition(BaseModel):
    """Everything that shapes a report; field names match the ``coca-eval report`` options."""

    model_config = ConfigDict(extra="forbid")

    title: str = "coca-eval report"
    notes: list[str] = Field(default_factory=list)
    groups: list[GroupSpec] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    paper: list[str] = Field(default_factory=list)
    delta_vs: str | None = None
    delta_pairs: list[tuple[str, str]] = Field(default_factory=list)  # (candidate, baseline) rows
    intervals: bool = False
    show_n: bool = False
    digits: int = Field(default=2, ge=0, le=8)
    metric: str | None = None  # a task's other view of its cells (ppl: bpb, word_ppl)
    trained_context: int | None = None
    distance_ranges: int = Field(default=4, ge=1, le=16)
    depth_bins: int = Field(default=10, ge=1, le=50)
    plots: bool = True

    def group_pairs(self) -> list[tuple[str, list[str]]]:
        """Groups by display label (a definition may name rows before or after relabelling)."""
        return [(g.name, [self.labels.get(m, m) for m in g.methods]) for g in self.groups]

    def with_overrides(self, **overrides) -> ReportDefinition:
        """Command-line values laid over the file's. ``None`` and ``()`` mean "not given", and so does
        ``False`` for a switch that is off by default (an unset ``--intervals`` keeps the file's value)."""
        fields = ReportDefinition.model_fields
        given = {
            k: v
            for k, v in overrides.items()
            if v is not None and v != () and not (v is False and fields[k].default is False)
        }
        try:
            return ReportDefinition.model_validate({**self.model_dump(), **given})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise CocaEvalError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None


def definition_dirs() -> list[Path]:
    """The packaged copy first (non-editable install), then the source checkout's ``reports/``."""
    packaged = Path(str(resources.files("coca_eval"))) / "_presets" / "reports" / "definitions"
    checkout = Path(__file__).resolve().parent.parent.parent / "reports" / "definitions"
    return [d for d in (packaged, checkout) if d.is_dir()]


def load_definition(name_or_path: str | None) -> ReportDefinition:
    """A definition by file path or by name (``reports/definitions/NAME.yaml``); None gives the default."""
    if name_or_path is None:
        return ReportDefinition()
    path = Path(name_or_path)
    if not path.is_file():
        found = [
            d / f"{name_or_path}.yaml" for d in definition_dirs() if (d / f"{name_or_path}.yaml").is_file()
        ]
        if not found:
            raise CocaEvalError(
                f"report definition not found: {name_or_path} (a YAML file or a shipped name)"
            )
        path = found[0]
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return ReportDefinition.model_validate(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise CocaEvalError(f"cannot read report definition {path}: {str(exc).splitlines()[0]}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CocaEvalError(f"report definition {path} is invalid at {where}: {first['msg']}") from None
