"""Where a task's package keeps its hooks when it follows the usual layout: the parameters in
``params``, the runner in ``task``, the report's hooks in ``report``, and so on. A spec then names such
a hook by its field alone and spells out only the hooks kept elsewhere, so the layout is written once,
here, instead of once per family, and a family's spec shows what is particular to it.

Every hook stays a lazy ``"module:attr"`` reference (:func:`~coca_eval.registry.lazy`): registering a
task imports none of its code. A spec may still write its references out in full; this is a
shorthand for them, not another way of registering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coca_eval.registry import lazy

# field -> "module:attr" inside the package; {name} is the task's name, {Name} its CamelCase
SPEC_HOOKS = {
    "make_params": "params:make_{name}_params",
    "preset_params": "params:{Name}PresetParams",
    "check": "params:check_methods",
    "shortest": "params:shortest_length",
    "make_runner": "task:{Name}Runner",
    "combine": "task:combine_cell",
    "finish": "report:finish_hook",
    "merged": "report:merged_hook",
    "console": "report:console",
    "contradiction": "records:cell_contradiction",
    "config_model": "records:{Name}Config",
    "catalogue": "tasks:catalogue",
    "definitions": "tasks:definitions",
    "score_sample": "scoring:score_sample",
    "command": "coca_eval.cli.{name}:{name}",
}
REPORT_HOOKS = {
    "protocol": "report:protocol_line",
    "interval": "report:interval",
    "units": "report:units",
    "tables": "report:{name}_tables",
    "plots": "plots:plot_hook",
}
GATE_HOOKS = {
    "test": "gate:paired_test",
    "units": "report:unit_ids",
    "run_checks": "gate:effective_length_checks",
}
# the fields that hold the "module:attr" string itself (resolved where they are read), not a callable
NAMED_FIELDS = frozenset({"preset_params", "config_model", "command"})


@dataclass(frozen=True)
class TaskPackage:
    """The package of the task ``name`` (``coca_eval.<name>`` unless ``package`` says otherwise)."""

    name: str
    package: str = ""

    @property
    def root(self) -> str:
        return self.package or f"coca_eval.{self.name}"

    def target(self, where: str) -> str:
        """The full reference of ``where``: ``"module:attr"`` inside the package, or a reference
        elsewhere given in full (its module dotted: ``"coca_eval.lengths:shortest_answered"``)."""
        module = where.partition(":")[0]
        return where if "." in module else f"{self.root}.{where}"

    def lazy(self, where: str) -> Callable[..., Any]:
        """A lazy hook for ``where`` (a hook outside the spec's usual fields: a report view)."""
        return lazy(self.target(where))

    def spec(self, usual: str = "", **elsewhere: str) -> dict[str, Any]:
        """:class:`~coca_eval.taskspec.TaskSpec` hooks: those named in ``usual`` (space-separated
        fields) where the layout puts them, those in ``elsewhere`` where they say."""
        return self._hooks(SPEC_HOOKS, usual, elsewhere)

    def report(self, usual: str = "", **elsewhere: str) -> dict[str, Any]:
        """:class:`~coca_eval.taskspec.ReportHooks` hooks, as :meth:`spec`."""
        return self._hooks(REPORT_HOOKS, usual, elsewhere)

    def gate(self, usual: str = "", **elsewhere: str) -> dict[str, Any]:
        """:class:`~coca_eval.taskspec.GateHooks` hooks, as :meth:`spec`."""
        return self._hooks(GATE_HOOKS, usual, elsewhere)

    def _hooks(self, layout: Mapping[str, str], usual: str, elsewhere: dict[str, str]) -> dict[str, Any]:
        """A typo in ``usual``, or a field named both usual and elsewhere, fails at import (every spec
        is imported by ``coca-eval --help``), not when the hook is first called."""
        unknown = [field for field in usual.split() if field not in layout]
        if unknown:
            raise ValueError(f"no usual place for {', '.join(unknown)} (known: {', '.join(layout)})")
        twice = [field for field in usual.split() if field in elsewhere]
        if twice:
            raise ValueError(f"{', '.join(twice)}: named both in its usual place and elsewhere")
        camel = "".join(part.capitalize() for part in self.name.split("_"))
        wanted = {field: layout[field].format(name=self.name, Name=camel) for field in usual.split()}
        return {field: self._hook(field, where) for field, where in {**wanted, **elsewhere}.items()}

    def _hook(self, field: str, where: str) -> Any:
        return self.target(where) if field in NAMED_FIELDS else self.lazy(where)
