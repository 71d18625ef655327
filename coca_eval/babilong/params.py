"""Parameters of the ``babilong`` task, validated before any model loads."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import PlainValidator, StrictStr

from coca_eval.babilong.data import HUB, hub_dataset
from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import (
    PROMPT_AND_ANSWER,
    FamilyPresetParams,
    RelativeBarParams,
    check_sampling,
    refuse_vllm_dynamic,
)
from coca_eval.params import PROMPT_BOS_CHOICES as BOS_CHOICES
from coca_eval.params import (
    SampledCells,
    check_preset_lengths,
    normalise_task_values,
)

GENERATE, PREPARED = "generate", "babilong"
SOURCES = (GENERATE, PREPARED)
PARTS = ("instruction", "examples", "post_prompt")
ALL_TASKS = tuple(f"qa{i}" for i in range(1, 21))
GROUPS = {"babilong": ALL_TASKS[:5], "all": ALL_TASKS}  # the paper's default set: qa1-qa5
SHORTEST_SHARE = 85.0
"""The effective length is read at this share (%) of the task average at the run's shortest length
(BABILong reads 85 % of the 0k score, its facts without noise)."""
BOOKS = "books"


@dataclass(frozen=True)
class BabilongParams(RelativeBarParams, SampledCells):
    """Everything that changes a BABILong number, plus the share the effective length is read at."""

    tasks: tuple[str, ...] = GROUPS["babilong"]
    lengths: tuple[int, ...] = field(default=(1024, 2048, 4096, 8192, 16384, 32768))
    samples: int | str = 100
    seed: int = 42
    source: str = GENERATE
    babi_data: str | None = None  # bAbI's task files or hub (generate); None: our qa1-qa3 generator
    data: str | None = None  # BABILong's prepared sets (source babilong); None: the hub
    haystack: str = BOOKS
    prompt_parts: tuple[str, ...] = PARTS
    chat_template: str = "none"
    bos: str = "auto"
    share: float = SHORTEST_SHARE
    max_samples: int | None = None
    target_width: float | None = None

    # N holds the prompt and the answer budget, as RULER's and HELMET's do here
    length_counts = PROMPT_AND_ANSWER

    OPTIONAL = ("max_samples", "target_width", "data", "babi_data")
    FILES = ("haystack", "data", "babi_data", "chat_template")

    def names_the_hub(self, option: str, value: str) -> bool:
        """``--babi-data hub`` and ``--data owner/name`` name the hub, not a path."""
        return (option, value) == ("babi_data", HUB) or (option == "data" and hub_dataset(value) is not None)

    def prompt_length(self, length: int, task: str) -> int:
        from coca_eval.babilong.prompt_task import ANSWER_BUDGET

        return length - ANSWER_BUDGET

    def longest_sequence(self) -> int:
        return max(self.lengths)


def _preset_lengths(value: Any) -> Any:
    """A preset's ``lengths`` as everywhere, BABILong's facts-only ``0k`` allowed among them (whether
    the source takes it is checked with the other parameters)."""
    if isinstance(value, str):
        rest = [item for item in value.split(",") if not re.fullmatch(r"\s*0\s*[kK]?\s*", item)]
        if rest and len(rest) < len(value.split(",")):
            check_preset_lengths(",".join(rest))
            return value
    return check_preset_lengths(value)


class BabilongPresetParams(FamilyPresetParams):
    """What a babilong preset file may set, in YAML's types: a family's, BABILong's ``0k`` among the
    lengths, and its own."""

    lengths: Annotated[Any, PlainValidator(_preset_lengths)] = None
    source: Literal[SOURCES] = None
    babi_data: StrictStr | None = None
    haystack: StrictStr = None
    prompt_parts: StrictStr | list[StrictStr] = None


def _names(value, kind: str, valid: tuple[str, ...], groups: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    names = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for name in (n.strip() for n in names if n.strip()):
        for member in groups.get(name, (name,)):
            if member not in valid:
                raise CocaEvalError(f"unknown {kind} {member!r} (valid: {', '.join([*groups, *valid])})")
            if member not in out:
                out.append(member)
    return tuple(out)


def _facts_only_length(values: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Take BABILong's ``0k`` (its facts-only set, the base of its effective length) out of the
    lengths before they are parsed as token counts, which must be positive; whether it was there."""
    lengths = values.get("lengths")
    if lengths is None:
        return values, False
    items = lengths.split(",") if isinstance(lengths, str) else [str(v) for v in lengths]
    zero = [item for item in items if re.fullmatch(r"\s*0\s*[kK]?\s*", item)]
    if not zero:
        return values, False
    if values.get("source") != PREPARED:
        raise CocaEvalError("length 0k is BABILong's facts-only set: it needs --source babilong")
    rest = [item for item in items if item not in zero]
    if not rest:
        return {key: value for key, value in values.items() if key != "lengths"}, True
    return {**values, "lengths": ",".join(rest) if isinstance(lengths, str) else rest}, True


def make_babilong_params(values: dict[str, Any]) -> BabilongParams:
    values, facts_only = _facts_only_length(values)
    values = normalise_task_values(values, BabilongParams.__dataclass_fields__, "babilong")
    if facts_only:
        values["lengths"] = (0, *values.get("lengths", ()))
    if values.get("tasks") is not None:
        values["tasks"] = _names(values["tasks"], "BABILong task", ALL_TASKS, GROUPS)
        if not values["tasks"]:
            raise CocaEvalError("--tasks names no BABILong task")
    if values.get("prompt_parts") is not None:
        parts = values["prompt_parts"]
        values["prompt_parts"] = () if parts in ("", "none") else _names(parts, "prompt part", PARTS, {})
    params = BabilongParams(**values)
    if params.source not in SOURCES:
        raise CocaEvalError(f"--source must be one of {', '.join(SOURCES)}")
    if params.bos not in BOS_CHOICES:
        raise CocaEvalError(f"--bos must be one of {', '.join(BOS_CHOICES)}")
    params.check_relative("BABILong", ("haystack", "data", "babi_data"))
    check_sampling(params)
    return params


def shortest_length(params: BabilongParams) -> tuple[int, str]:
    """The shortest N the run's tasks can build: BABILong's template with the kept prompt parts (its
    worked examples run to hundreds of words), a token of context, and the answer budget."""
    from coca_eval.babilong.prompts import formatted_input
    from coca_eval.lengths import shortest_answered, words_of

    def fixed(task: str) -> tuple[int, str]:
        parts = ", ".join(params.prompt_parts) or "no prompt part"
        return words_of(formatted_input(task, "", "", params.prompt_parts)), f"the template with {parts}"

    return shortest_answered(params, fixed)


def check_methods(params: BabilongParams, methods) -> None:
    """Refuse, before any model loads, samples that cannot be read (missing bAbI files, an unreachable
    hub or a malformed local file) and a haystack that does not load."""
    from coca_eval.babilong.data import babi_samples, babilong_rows
    from coca_eval.generation.haystacks import load_essay

    for task in params.tasks:
        if params.source == GENERATE:
            babi_samples(task, params.babi_data, params.seed)
        else:
            for length in params.lengths:
                babilong_rows(task, length, params.data)
    if params.source == GENERATE:
        load_essay(params.haystack)
    refuse_vllm_dynamic(methods)
