"""A spec that names its hooks by the usual layout (:mod:`coca_eval.conventions`) names hooks that exist:
every reference of every built-in task resolves, so a layout entry or a field listed by mistake fails
here rather than on the first run that calls it."""

from __future__ import annotations

import dataclasses

import pytest

from coca_eval.conventions import NAMED_FIELDS, TaskPackage
from coca_eval.registry import resolve
from coca_eval.taskspec import TASKS


def references(hooks) -> list[str]:
    """The ``"module:attr"`` references a spec (or its report or gate hooks) holds."""
    found = []
    for field in dataclasses.fields(hooks):
        value = getattr(hooks, field.name)
        if dataclasses.is_dataclass(value):
            found += references(value)
        elif field.name in NAMED_FIELDS and value:
            found.append(value)
        for hook in value.values() if isinstance(value, dict) else [value]:
            if ":" in getattr(hook, "__qualname__", ""):
                found.append(hook.__qualname__)
    return found


@pytest.mark.parametrize("task", TASKS.names())
def test_every_reference_of_a_built_in_task_resolves(task):
    found = references(TASKS.get(task))
    assert found
    for reference in found:
        assert resolve(reference) is not None, reference


def test_usual_fields_take_the_layout_and_the_rest_say_where():
    hooks = TaskPackage("aa_lcr").spec("preset_params make_runner command", finish="dump:dump_hook")
    assert hooks["preset_params"] == "coca_eval.aa_lcr.params:AaLcrPresetParams"
    assert hooks["command"] == "coca_eval.cli.aa_lcr:aa_lcr"
    assert hooks["make_runner"].__qualname__ == "coca_eval.aa_lcr.task:AaLcrRunner"
    assert hooks["finish"].__qualname__ == "coca_eval.aa_lcr.dump:dump_hook"
    inner = TaskPackage("longppl", "coca_eval.ppl.longppl").gate(
        "test", units="coca_eval.ppl.report:unit_ids"
    )
    assert [h.__qualname__ for h in inner.values()] == [
        "coca_eval.ppl.longppl.gate:paired_test",
        "coca_eval.ppl.report:unit_ids",
    ]


def test_a_field_without_a_usual_place_or_named_twice_is_refused():
    with pytest.raises(ValueError, match="no usual place for finsh"):
        TaskPackage("mine").spec("finish finsh")
    with pytest.raises(ValueError, match="check: named both"):
        TaskPackage("mine").spec("check", check="task:check")
