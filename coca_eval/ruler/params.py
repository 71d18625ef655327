"""Parameters of the ``ruler`` task, validated before any model loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import StrictFloat, StrictInt, StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.params import (
    PROMPT_BOS_CHOICES as BOS_CHOICES,
)
from coca_eval.params import (
    PositiveCount,
    PresetLengths,
    PresetParams,
    SampledCells,
    check_chat_template,
    normalise_task_values,
    require_positive_int,
)
from coca_eval.ruler.tasks import RULER_GROUPS, RULER_TASKS, expand_task_names
from coca_eval.sequential import StoppingRule

RULER_THRESHOLD = 85.6  # Llama-2-7B's average at 4k: RULER's bar for an "effective" length
RULER_LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)
PROMPT_AND_ANSWER, PROMPT_ONLY = "prompt+answer", "prompt"
LENGTH_COUNTS = (PROMPT_AND_ANSWER, PROMPT_ONLY)
"""What a length N counts: RULER's prompt + answer budget = N (the prompt is N minus the task's budget),
or the prompt alone (the answer decoded past N), this project's meaning before it matched RULER's."""
BOOKS = "books"  # the embedded public-domain books, our default for RULER's essay haystack


@dataclass(frozen=True)
class RulerParams(SampledCells):
    """Everything that changes a RULER number, plus the threshold the effective length is read at
    (which changes no fixed-count cell, so it stays out of :meth:`identity` unless it stops cells).

    ``--samples auto`` samples each cell in rounds (:mod:`coca_eval.rounds`) up to ``max_samples``: until
    its anytime-valid interval is narrower than ``target_width`` points when that is given, else until
    the interval lies wholly above or below ``threshold``, the effective length's bar. Scores are
    RULER's points (0-100) on the command line and fractions in the :class:`StoppingRule`."""

    tasks: tuple[str, ...] = RULER_GROUPS["ruler"]
    lengths: tuple[int, ...] = field(default=RULER_LENGTHS)
    samples: int | str = 500  # or "auto": rounds until the stopping rule is met
    seed: int = 42  # RULER's random_seed
    haystack: str = BOOKS  # ``books`` or a text file / directory standing in for RULER's essays
    qa_data: str | None = None  # a local SQuAD / HotpotQA file instead of the hub
    chat_template: str = "auto"  # auto | none | a Jinja template file
    bos: str = "auto"
    threshold: float = RULER_THRESHOLD
    length_counts: str = PROMPT_AND_ANSWER  # see LENGTH_COUNTS
    max_samples: int | None = None  # --samples auto: the most samples a cell may spend
    target_width: float | None = None  # --samples auto: stop once the interval is this narrow (points)

    def identity(self) -> dict[str, Any]:
        """What makes two runs' cells the same numbers: files by content fingerprint; the threshold only
        when it stops cells (``--samples auto`` without ``--target-width``), the stopping rule only under
        ``auto``, so a fixed-count run keeps the identity (and journal keys) it always had.
        ``length_counts`` appears only as RULER's ``prompt+answer``: runs made before it existed counted
        the prompt alone, and so does ``--length-counts prompt``, which therefore reads (and resumes)
        those runs."""
        from coca_eval.data.sources import source_fingerprint

        values = asdict(self)
        rule = self.stopping_rule()
        if rule is None or rule.threshold is None:
            del values["threshold"]
        for name in ("max_samples", "target_width"):
            if values[name] is None:
                del values[name]
        if self.length_counts == PROMPT_ONLY:
            del values["length_counts"]
        for name in ("haystack", "qa_data"):
            if values[name] is not None and _is_path_option(name, values[name]):
                values[name] = source_fingerprint(values[name])
        return values

    def stopping_rule(self) -> StoppingRule | None:
        """The rule of ``--samples auto`` on scores in [0, 1], or None for a fixed sample count."""
        if self.samples != "auto":
            return None
        if self.target_width is not None:
            return StoppingRule(self.max_samples, target_width=self.target_width / 100)
        return StoppingRule(self.max_samples, threshold=self.threshold / 100)

    def prompt_length(self, length: int, task: str) -> int:
        """The prompt's tokens at ``length`` for ``task``: N minus its answer budget (RULER's), or N."""
        budget = RULER_TASKS.get(task).answer_budget
        return length - budget if self.length_counts == PROMPT_AND_ANSWER else length

    def longest_sequence(self) -> int:
        """Prompt plus answer at the longest length: what engines that size their context up front hold
        (N itself when N counts both, as in RULER)."""
        if self.length_counts == PROMPT_AND_ANSWER:
            return max(self.lengths)
        return max(self.lengths) + max(RULER_TASKS.get(t).answer_budget for t in self.tasks)


def _is_path_option(name: str, value: str) -> bool:
    """A file the user named (haystack, QA data, chat template), as opposed to a keyword choice."""
    keywords = {"haystack": (BOOKS,), "chat_template": ("auto", "none")}.get(name, ())
    return value not in keywords


class RulerPresetParams(PresetParams):
    """What a ruler preset file may set, in YAML's types."""

    tasks: StrictStr | list[StrictStr] = None
    lengths: PresetLengths = None
    samples: PositiveCount | Literal["auto"] = None
    max_samples: PositiveCount = None
    target_width: StrictFloat | StrictInt = None
    seed: StrictInt = None
    haystack: StrictStr = None
    qa_data: StrictStr | None = None
    chat_template: StrictStr = None
    bos: Literal[BOS_CHOICES] = None
    threshold: StrictFloat | StrictInt = None
    length_counts: Literal[LENGTH_COUNTS] = None


def parse_task_names(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``niah_single_1,vt`` or a list; groups (``ruler``) expanded, unknown names refused."""
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise CocaEvalError("--tasks names no RULER task")
    return expand_task_names(names)


def make_ruler_params(values: dict[str, Any]) -> RulerParams:
    values = normalise_task_values(values, RulerParams.__dataclass_fields__, "ruler")
    if values.get("tasks") is not None:
        values["tasks"] = parse_task_names(values["tasks"])
    params = RulerParams(**values)
    if params.length_counts not in LENGTH_COUNTS:
        raise CocaEvalError(f"--length-counts must be one of {', '.join(LENGTH_COUNTS)}")
    if params.bos not in BOS_CHOICES:
        raise CocaEvalError(f"--bos must be one of {', '.join(BOS_CHOICES)}")
    if isinstance(params.threshold, bool) or not 0 <= float(params.threshold) <= 100:
        raise CocaEvalError(f"--threshold must be a score between 0 and 100 (got {params.threshold!r})")
    check_sampling(params)
    for name in ("haystack", "qa_data"):
        value, option = getattr(params, name), "--" + name.replace("_", "-")
        if value is not None and _is_path_option(name, value) and not Path(value).expanduser().exists():
            raise CocaEvalError(f"{option} {value}: no such file or directory")
    check_chat_template(params.chat_template)
    return params


def check_sampling(params: RulerParams) -> None:
    """``--samples N``, or ``auto`` with ``--max-samples`` and a rule it can follow, in RULER's points."""
    if params.samples != "auto":
        require_positive_int("--samples", params.samples)
        rule_options = ("max_samples", "target_width")
        given = [f"--{k.replace('_', '-')}" for k in rule_options if getattr(params, k) is not None]
        if given:
            raise CocaEvalError(f"{', '.join(given)} only apply with --samples auto")
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


def check_methods(params: RulerParams, methods) -> None:
    """Refuse, before any model loads, what cannot run: a haystack or QA source that does not load
    (read once here and kept for the prompts), and what a backend cannot run as hf does: vLLM's engine
    holds the prompt's dynamic NTK base through the answer, where transformers rescales it per token."""
    from coca_eval.ruler.prompts import check_sources

    if not getattr(params, "replay", ""):  # a replay's prompts are another harness's, already written
        check_sources(params.tasks, params.haystack, params.qa_data)
    refuse_vllm_dynamic(methods)


def refuse_vllm_dynamic(methods) -> None:
    """vLLM's engine holds the prompt's dynamic NTK base through the answer, where transformers
    rescales it per token: a generation task's numbers would not be hf's."""
    for method in methods:
        if method.backend == "vllm" and method.rope.kind == "dynamic":
            raise CocaEvalError(
                f"{method.label}: --backend vllm holds dynamic rope at the prompt's scaling through the "
                "answer, which RULER on hf does not; use --backend hf for dynamic rope patches"
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
