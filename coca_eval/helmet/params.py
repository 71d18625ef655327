"""Parameters of the ``helmet`` task, validated before any model loads."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import (
    PROMPT_AND_ANSWER,
    FamilyPresetParams,
    RelativeBarParams,
    check_sampling,
    expanded_values,
    refuse_vllm_dynamic,
)
from coca_eval.helmet.tasks import HELMET_GROUPS, HELMET_LENGTHS, HELMET_TASKS, expand_task_names
from coca_eval.params import PROMPT_BOS_CHOICES as BOS_CHOICES
from coca_eval.params import (
    PositiveCount,
    PresetLengths,
    SampledCells,
    require_choice,
    require_positive_int,
)

EXACT, HELMET = "exact", "helmet"
PROTOCOLS = (EXACT, HELMET)
"""``exact``: prompt + answer budget = N in the model's tokens, whole units while they fit (ours);
``helmet``: HELMET's units per length and its truncation, for numbers comparable with its tables."""
SHORTEST_SHARE = 85.0
"""A category's effective length is read at this share (%) of its own score at the run's shortest
length: HELMET defines no threshold, and a fixed bar would mean different things per category (NDCG
against exact match). NoLiMa reads its effective length the same way (85 % of the base score)."""
BOOKS = "books"
PER_TASK = "helmet"  # --samples helmet: each task's count in HELMET's configs


@dataclass(frozen=True)
class HelmetParams(RelativeBarParams, SampledCells):
    """Everything that changes a HELMET number, plus the share the effective length is read at."""

    tasks: tuple[str, ...] = HELMET_GROUPS["recall"]
    lengths: tuple[int, ...] = field(default=HELMET_LENGTHS)
    samples: int | str = PER_TASK  # HELMET's max_test_samples per task (100, ICL 500), a count, or "auto"
    seed: int = 42  # HELMET's seed
    protocol: str = EXACT
    haystack: str = BOOKS  # the essay haystack of ruler_niah_mv (RULER's)
    data: str | None = None  # a directory of HELMET's data files instead of the hub
    chat_template: str = "none"  # HELMET's use_chat_template: false
    bos: str = "auto"
    share: float = SHORTEST_SHARE
    max_samples: int | None = None
    target_width: float | None = None
    judge: str | None = None  # the model judging LongQA and summaries (HELMET's GPT-4o), by name
    judge_max_tokens: int = 1024
    judge_id: str | None = None  # the judge's identity, set by make_helmet_params once it answers

    length_counts = (
        PROMPT_AND_ANSWER  # N holds the prompt and the answer budget, as HELMET's input_max_length
    )

    def names_the_hub(self, option: str, value: str) -> bool:
        return (option, value) == ("data", "hub")

    def identity(self) -> dict[str, Any]:
        """The judge by its identity (never its name: a URL may hold credentials); a run without one
        keeps the identity (and journal keys) runs had before judges existed."""
        values = super().identity()
        del values["judge"]
        if self.judge_id is None:
            del values["judge_id"], values["judge_max_tokens"]
        return values

    @property
    def drawn_samples(self) -> int:
        """The most samples any task's cells hold (see :meth:`task_samples`)."""
        return max(self.task_samples(t) for t in self.tasks)

    def task_samples(self, task: str) -> int:
        """How many samples ``task``'s cells hold: ``--samples N``, HELMET's count for the task under
        ``helmet``, ``--max-samples`` under ``auto``."""
        if self.samples == PER_TASK:
            return HELMET_TASKS.get(task).samples
        return self.max_samples if self.samples == "auto" else self.samples

    def prompt_length(self, length: int, task: str) -> int:
        return length - HELMET_TASKS.get(task).answer_budget

    def longest_sequence(self) -> int:
        return max(self.lengths)


class HelmetPresetParams(FamilyPresetParams):
    """What a helmet preset file may set, in YAML's types: a family's, ``helmet`` among the sample
    counts, and HELMET's own."""

    lengths: PresetLengths = None
    samples: PositiveCount | Literal["auto", "helmet"] = None
    protocol: Literal[PROTOCOLS] = None
    haystack: StrictStr = None
    judge: StrictStr | None = None
    judge_max_tokens: PositiveCount = None


def make_helmet_params(values: dict[str, Any]) -> HelmetParams:
    params = HelmetParams(**expanded_values(HelmetParams, values, "helmet", "HELMET", expand_task_names))
    require_choice("--protocol", params.protocol, PROTOCOLS)
    require_choice("--bos", params.bos, BOS_CHOICES)
    params.check_relative("HELMET", ("haystack", "data"))
    if params.samples != PER_TASK:
        check_sampling(params)
    elif params.max_samples is not None or params.target_width is not None:
        raise CocaEvalError("--max-samples and --target-width only apply with --samples auto")
    if values.get("judge_id") is not None:
        raise CocaEvalError("unknown helmet parameter(s): judge_id")
    if not params.judge:
        return params
    from coca_eval.judging.judges import judge_identity, parse_judge

    require_positive_int("--judge-max-tokens", params.judge_max_tokens)
    return replace(params, judge_id=judge_identity(parse_judge(params.judge))[1])


def check_methods(params: HelmetParams, methods) -> None:
    """Refuse, before any model loads, what cannot run: a task's data that is missing or malformed
    (read once here and kept for the prompts), a length HELMET has no file for under ``--protocol
    helmet``, the essay haystack of ``ruler_niah_mv`` that does not load."""
    from coca_eval.generation.haystacks import load_essay
    from coca_eval.helmet.prompts import DATA_FAMILIES, Sources, exact_units, helmet_data, load_family_data

    chosen = [HELMET_TASKS.get(t) for t in params.tasks]
    sources = Sources(params.data, params.seed, params.task_samples)
    if params.protocol == HELMET and params.bos != "auto":
        raise CocaEvalError(
            "--protocol helmet adds BOS as HELMET does (as the tokenizer does): leave --bos auto"
        )
    for task in chosen:
        if params.protocol == HELMET:
            for length in params.lengths:
                helmet_data(task, sources, length)
        elif task.family in DATA_FAMILIES:
            load_family_data(task, sources, exact_units(task))
    if any(t.ruler_task == "niah_multivalue" for t in chosen):
        load_essay(params.haystack)
    if any(t.metric.startswith("rouge") for t in chosen):  # their scorer, before any model loads
        from coca_eval.helmet.scoring import rouge_metrics

        rouge_metrics("a", "a")
    refuse_vllm_dynamic(methods)
