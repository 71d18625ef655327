"""What every generation family's parameters share: what a length N counts, how ``--samples`` is
checked, the backends a family cannot run as hf does, the parameters of the families whose
effective length is read relative to their own shortest length (HELMET, BABILong), and the
parameters a new family starts from (:class:`FamilyParams`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import StrictFloat, StrictInt, StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.generation.haystacks import BOOKS
from coca_eval.params import (
    PROMPT_BOS_CHOICES,
    PositiveCount,
    PresetParams,
    SampledCells,
    check_chat_template,
    normalise_task_values,
    require_choice,
)
from coca_eval.sequential import StoppingRule

PROMPT_AND_ANSWER, PROMPT_ONLY, WITH_THOUGHT = "prompt+answer", "prompt", "prompt+answer+thought"
LENGTH_COUNTS = (PROMPT_AND_ANSWER, PROMPT_ONLY, WITH_THOUGHT)
"""What a length N counts: RULER's prompt + answer budget = N (the prompt is N minus the task's budget),
the prompt alone (the answer decoded past N), this project's meaning before it matched RULER's, or
prompt + answer budget + think budget = N for a thinking run (the accounting of RULER's users who give
a reasoning model 112k of input and 16k of output at 128k)."""


def check_sampling(params: Any) -> None:
    """``--samples N``, or ``auto`` with ``--max-samples`` and a rule it can follow, in points (0-100)."""
    if params.samples != "auto":
        params.check_fixed_count(("max_samples", "target_width"))
        return
    count = params.max_samples
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise CocaEvalError(f"--samples auto needs --max-samples, a positive integer (got {count!r})")
    width = params.target_width
    if width is not None and (isinstance(width, bool) or not 0 < float(width) < 100):
        raise CocaEvalError(f"--target-width must be a score width in (0, 100) points (got {width!r})")
    if width is None and not 0 < float(params.threshold) < 100:
        raise CocaEvalError(
            f"--samples auto stops a cell once its interval lies above or below --threshold, which must "
            f"then lie in (0, 100) (got {params.threshold!r}); or give --target-width"
        )


def refuse_vllm_dynamic(methods) -> None:
    """vLLM's engine holds the prompt's dynamic NTK base through the answer, where transformers
    rescales it per token: a generation task's numbers would not be hf's."""
    for method in methods:
        if method.backend == "vllm" and method.rope.kind == "dynamic":
            raise CocaEvalError(
                f"{method.label}: --backend vllm holds dynamic rope at the prompt's scaling through the "
                "answer, which hf does not; use --backend hf for dynamic rope patches"
            )


class RelativeBarParams:
    """What the families whose effective length is read at ``share`` % of their own shortest length
    (HELMET, BABILong) share on top of :class:`~coca_eval.params.SampledCells`: no fixed bar, so
    ``--samples auto`` stops on ``--target-width`` alone; ``share`` changes no cell and stays out of
    the identity; files are named by content fingerprint, keywords (``KEYWORDS``) and hub names
    (:meth:`names_the_hub`) as they are."""

    KEYWORDS = ("books", "auto", "none")
    OPTIONAL = ("max_samples", "target_width", "data")  # left out of the identity when unset
    FILES = ("haystack", "data", "chat_template")  # named by their content's fingerprint

    @property
    def threshold(self) -> float:
        return self.share

    def names_the_hub(self, option: str, value: str) -> bool:
        """Whether ``value`` of ``option`` names something on the hub rather than a local path."""
        return False

    def identity(self) -> dict[str, Any]:
        from coca_eval.data.sources import source_fingerprint

        values = asdict(self)
        del values["share"]
        for name in self.OPTIONAL:
            if values.get(name) is None:
                values.pop(name, None)
        for name in self.FILES:
            value = values.get(name)
            if value is not None and value not in self.KEYWORDS and not self.names_the_hub(name, value):
                values[name] = source_fingerprint(value)
        return values

    def stopping_rule(self) -> StoppingRule | None:
        if self.samples != "auto":
            return None
        return StoppingRule(self.max_samples, target_width=self.target_width / 100)

    def check_relative(self, family: str, paths: tuple[str, ...]) -> None:
        """The checks both families make once their own are done: the share, ``auto``'s target
        width, local paths that must exist, the chat template."""
        if isinstance(self.share, bool) or not 0 < float(self.share) <= 100:
            raise CocaEvalError(f"--share must be a percentage in (0, 100] (got {self.share!r})")
        if self.samples == "auto" and self.target_width is None:
            raise CocaEvalError(
                f"--samples auto needs --target-width for {family}: its effective length is read relative "
                "to the shortest length, so there is no fixed score for a cell to clear"
            )
        for name in paths:
            value = getattr(self, name)
            if value is None or value in self.KEYWORDS or self.names_the_hub(name, value):
                continue
            if not Path(value).expanduser().exists():
                raise CocaEvalError(f"--{name.replace('_', '-')} {value}: no such file or directory")
        check_chat_template(self.chat_template)


@dataclass(frozen=True)
class FamilyParams(RelativeBarParams, SampledCells):
    """The parameters a new family starts from: its tasks, exact lengths (prompt + answer budget = N),
    sampling (a count, or ``auto`` with ``--max-samples`` and ``--target-width``), seed, the essay
    haystack, chat template, BOS, and the share its effective length is read at. A family subclasses
    it for its own fields and says each task's answer budget (:meth:`answer_budget`)."""

    tasks: tuple[str, ...] = ()
    lengths: tuple[int, ...] = (1024, 2048)
    samples: int | str = 10
    seed: int = 0
    haystack: str = BOOKS
    chat_template: str = "auto"
    bos: str = "auto"
    share: float = 85.0
    max_samples: int | None = None
    target_width: float | None = None

    length_counts = PROMPT_AND_ANSWER  # N holds the prompt and the answer budget, as in RULER

    def answer_budget(self, task: str) -> int:
        raise NotImplementedError

    def prompt_length(self, length: int, task: str) -> int:
        return length - self.answer_budget(task)

    def longest_sequence(self) -> int:
        return max(self.lengths)


def split_task_names(value: str | Sequence[str]) -> list[str]:
    """``--tasks`` as given, ``a,b`` or a preset's list: its names, stripped, blanks dropped."""
    names = value.split(",") if isinstance(value, str) else list(value)
    return [n.strip() for n in names if n.strip()]


def expand_names(
    names: Iterable[str], groups: Mapping[str, Sequence[str]], tasks: Any, title: str, fold_case: bool = False
) -> tuple[str, ...]:
    """Task names with ``groups`` expanded (a group named in any case with ``fold_case``), in the order
    given, each once; a name the registry ``tasks`` lacks is a user error listing the ``title`` family's
    groups and tasks."""
    out: list[str] = []
    for name in names:
        for task in groups.get(name.lower() if fold_case else name, (name,)):
            if task not in tasks:
                valid = ", ".join([*groups, *tasks.names()])
                raise CocaEvalError(f"unknown {title} task {task!r} (valid: {valid})")
            if task not in out:
                out.append(task)
    return tuple(out)


def expanded_values(
    cls: type, values: dict[str, Any], family: str, title: str, expand: Callable[[list[str]], tuple[str, ...]]
) -> dict[str, Any]:
    """A preset's values overlaid with options, as ``cls`` takes them (known parameter names only,
    lengths parsed), ``tasks`` expanded by the family's ``expand`` (groups named, unknown names
    refused); a ``--tasks`` that names nothing is refused as naming no ``title`` task."""
    values = normalise_task_values(values, cls.__dataclass_fields__, family)
    if values.get("tasks") is not None:
        names = split_task_names(values["tasks"])
        if not names:
            raise CocaEvalError(f"--tasks names no {title} task")
        values["tasks"] = expand(names)
    return values


def make_family_params(cls: type[FamilyParams], values: dict[str, Any], family: str, known: Sequence[str]):
    """``cls`` from a preset's values overlaid with options, every check a family shares made before
    any model loads: known parameter and task names (``known``), BOS, sampling, share, paths."""
    values = normalise_task_values(values, cls.__dataclass_fields__, family)
    if values.get("tasks") is not None:
        values["tasks"] = tuple(dict.fromkeys(split_task_names(values["tasks"])))
        unknown = [n for n in values["tasks"] if n not in known]
        if unknown or not values["tasks"]:
            raise CocaEvalError(
                f"unknown {family} task {', '.join(unknown) or '(none)'} (valid: {', '.join(known)})"
            )
    params = cls(**values)
    require_choice("--bos", params.bos, PROMPT_BOS_CHOICES)
    params.check_relative(family, ("haystack",))
    check_sampling(params)
    return params


class FamilyPresetParams(PresetParams):
    """What a preset of a family built on :class:`FamilyParams` (or, as HELMET's and BABILong's, on
    :class:`RelativeBarParams`) may set, in YAML's types, with the published rows it reads (``data``);
    a family adds its own (its ``source`` choices) and narrows or widens a type it reads otherwise."""

    tasks: StrictStr | list[StrictStr] = None
    lengths: StrictStr | list[StrictInt] = None
    samples: PositiveCount | Literal["auto"] = None
    max_samples: PositiveCount = None
    target_width: StrictFloat | StrictInt = None
    seed: StrictInt = None
    data: StrictStr | None = None
    chat_template: StrictStr = None
    bos: Literal[PROMPT_BOS_CHOICES] = None
    share: StrictFloat | StrictInt = None
