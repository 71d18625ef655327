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
from coca_eval.generation.params import FamilyPresetParams, make_family_params, refuse_vllm_dynamic
from coca_eval.generation.published import PublishedSetParams
from coca_eval.params import PositiveCount, require_choice, require_positive_int

EXACT, PUBLISHED = "exact", "published"
PROTOCOLS = (EXACT, PUBLISHED)
TASK = "aa_lcr"
NAMES = (TASK,)
DEFAULT_ANSWER_TOKENS = 1024  # the card sets no budget; AA runs reasoning models with far more


@dataclass(frozen=True)
class AaLcrParams(PublishedSetParams):
    """Everything that changes an AA-LCR number. Under ``exact`` a length is N = prompt + answer
    budget; under ``published`` it bounds the published prompt in the model's tokens (a length holds
    the questions whose whole prompt fits it: :class:`~coca_eval.generation.published.PublishedSetParams`)."""

    tasks: tuple[str, ...] = NAMES
    answer_tokens: int = DEFAULT_ANSWER_TOKENS
    judge: str | None = None
    judge_protocol: str = "1.1"
    judge_max_tokens: int = 256
    judge_id: str | None = None  # set by make_aa_lcr_params once the judge answers

    PUBLISHED = PUBLISHED
    DATA_FORMS = "hub, smoke, or a folder"
    OPTIONAL = ("max_samples", "target_width")

    def answer_budget(self, task: str) -> int:
        return self.answer_tokens

    def local_files(self) -> list[Path]:
        from coca_eval.aa_lcr.data import data_files

        return data_files(self.data)

    def identity(self) -> dict[str, Any]:
        """The judge by its identity (never its name: a URL may hold credentials), the data by name or
        by its files' content."""
        values = super().identity()
        del values["judge"]
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
    params.check_data()
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
