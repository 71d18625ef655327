"""Parameters of the ``ruler`` task, validated before any model loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import StrictFloat, StrictInt, StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.generation.haystacks import BOOKS
from coca_eval.generation.params import (
    LENGTH_COUNTS,
    PROMPT_AND_ANSWER,
    PROMPT_ONLY,
    check_sampling,
    expanded_values,
    refuse_vllm_dynamic,
)
from coca_eval.params import (
    PROMPT_BOS_CHOICES as BOS_CHOICES,
)
from coca_eval.params import (
    PositiveCount,
    PresetLengths,
    PresetParams,
    SampledCells,
    check_chat_template,
    require_choice,
)
from coca_eval.ruler.tasks import RULER_GROUPS, RULER_TASKS, expand_task_names
from coca_eval.sequential import StoppingRule

RULER_THRESHOLD = 85.6  # Llama-2-7B's average at 4k: RULER's bar for an "effective" length
RULER_LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)


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
        return length if self.length_counts == PROMPT_ONLY else length - budget

    def longest_sequence(self) -> int:
        """Prompt plus answer at the longest length: what engines that size their context up front hold
        (N itself when N counts both, as in RULER)."""
        if self.length_counts != PROMPT_ONLY:
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


def make_ruler_params(values: dict[str, Any]) -> RulerParams:
    """``tasks`` as ``niah_single_1,vt`` or a list: groups (``ruler``) expanded, unknown names refused."""
    params = RulerParams(**expanded_values(RulerParams, values, "ruler", "RULER", expand_task_names))
    require_choice("--length-counts", params.length_counts, LENGTH_COUNTS)
    require_choice("--bos", params.bos, BOS_CHOICES)
    if isinstance(params.threshold, bool) or not 0 <= float(params.threshold) <= 100:
        raise CocaEvalError(f"--threshold must be a score between 0 and 100 (got {params.threshold!r})")
    check_sampling(params)
    for name in ("haystack", "qa_data"):
        value, option = getattr(params, name), "--" + name.replace("_", "-")
        if value is not None and _is_path_option(name, value) and not Path(value).expanduser().exists():
            raise CocaEvalError(f"{option} {value}: no such file or directory")
    check_chat_template(params.chat_template)
    return params


def check_methods(params: RulerParams, methods) -> None:
    """Refuse, before any model loads, what cannot run: a haystack or QA source that does not load
    (read once here and kept for the prompts), and what a backend cannot run as hf does: vLLM's engine
    holds the prompt's dynamic NTK base through the answer, where transformers rescales it per token."""
    from coca_eval.ruler.prompts import check_sources

    if not getattr(params, "replay", ""):  # a replay's prompts are another harness's, already written
        check_sources(params.tasks, params.haystack, params.qa_data)
    refuse_vllm_dynamic(methods)
