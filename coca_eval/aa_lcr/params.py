"""Parameters of the ``aa_lcr`` task, checked before any model loads: the base's
(:class:`~coca_eval.generation.params.FamilyParams`), the protocol, where the questions come from
(``data``), the answer budget, and the judge (``judge``: any model this harness runs; ``judge_protocol``:
which of the card's two judge prompts; ``judge_max_tokens``). The judge is checked and named here
(:func:`~coca_eval.judging.judges.judge_identity`), so a server that does not answer or a name that is
no model is one line before the evaluated model loads, and its identity (``judge_id``) is part of
every cell's key and of the run's parameters."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import StrictStr

from coca_eval.aa_lcr.prompts import JUDGE_PROTOCOLS
from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import (
    PROMPT_AND_ANSWER,
    PROMPT_ONLY,
    FamilyParams,
    FamilyPresetParams,
    make_family_params,
    refuse_vllm_dynamic,
)
from coca_eval.params import PositiveCount, require_choice, require_positive_int

EXACT, PUBLISHED = "exact", "published"
PROTOCOLS = (EXACT, PUBLISHED)
TASK = "aa_lcr"
NAMES = (TASK,)
DEFAULT_ANSWER_TOKENS = 1024  # the card sets no budget; AA runs reasoning models with far more


@dataclass(frozen=True)
class AaLcrParams(FamilyParams):
    """Everything that changes an AA-LCR number. Under ``exact`` a length is N = prompt + answer
    budget; under ``published`` it bounds the published prompt in the model's tokens (a length holds
    the questions whose whole prompt fits it)."""

    tasks: tuple[str, ...] = NAMES
    protocol: str = EXACT
    data: str = "smoke"
    answer_tokens: int = DEFAULT_ANSWER_TOKENS
    judge: str | None = None
    judge_protocol: str = "1.1"
    judge_max_tokens: int = 256
    judge_id: str | None = None  # set by make_aa_lcr_params once the judge answers

    FILES = ("chat_template",)
    OPTIONAL = ("max_samples", "target_width")

    @property
    def length_counts(self) -> str:  # type: ignore[override]
        return PROMPT_ONLY if self.protocol == PUBLISHED else PROMPT_AND_ANSWER

    def answer_budget(self, task: str) -> int:
        return self.answer_tokens

    def prompt_length(self, length: int, task: str) -> int:
        return length if self.protocol == PUBLISHED else length - self.answer_tokens

    def longest_sequence(self) -> int:
        return max(self.lengths) + (self.answer_tokens if self.protocol == PUBLISHED else 0)

    def identity(self) -> dict[str, Any]:
        """The judge by its identity (never its name: a URL may hold credentials), the data by name or
        by its files' content."""
        from coca_eval.aa_lcr.data import data_files
        from coca_eval.data.published_rows import files_fingerprint

        values = super().identity()
        del values["judge"]
        if self.data not in ("hub", "smoke"):
            values["data"] = files_fingerprint(data_files(self.data))
        return values


class AaLcrPresetParams(FamilyPresetParams):
    """What an aa_lcr preset file may set, in YAML's types."""

    protocol: Literal[PROTOCOLS] = None
    answer_tokens: PositiveCount = None
    judge: StrictStr | None = None
    judge_protocol: Literal[JUDGE_PROTOCOLS] = None
    judge_max_tokens: PositiveCount = None


def make_aa_lcr_params(values: dict[str, Any]) -> AaLcrParams:
    if values.get("judge_id") is not None:
        raise CocaEvalError("unknown aa_lcr parameter(s): judge_id")
    params = make_family_params(AaLcrParams, values, TASK, NAMES)
    require_choice("--protocol", params.protocol, PROTOCOLS)
    require_choice("--judge-protocol", params.judge_protocol, JUDGE_PROTOCOLS)
    require_positive_int("--answer-tokens", params.answer_tokens)
    require_positive_int("--judge-max-tokens", params.judge_max_tokens)
    local = params.data not in ("hub", "smoke")
    if params.data is None or (local and not Path(params.data).expanduser().exists()):
        raise CocaEvalError(f"--data {params.data}: no such file or directory (hub, smoke, or a folder)")
    if not params.judge:
        raise CocaEvalError("AA-LCR is scored by a model judge: give --judge MODEL (a preset, a directory, "
                            "a hub id, or an OpenAI-compatible server's URL)")  # fmt: skip
    from coca_eval.judging.judges import judge_identity, parse_judge

    _, identity = judge_identity(parse_judge(params.judge))
    return replace(params, judge_id=identity)


def check_methods(params: AaLcrParams, methods) -> None:
    """Read and check every question and document before a model loads."""
    from coca_eval.aa_lcr.data import questions

    questions(params.data)
    refuse_vllm_dynamic(methods)


def shortest_length(params: AaLcrParams) -> tuple[int, str]:
    from coca_eval.lengths import shortest_answered

    return shortest_answered(params)
