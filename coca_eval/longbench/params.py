"""Parameters of the ``longbench`` task, checked before any model loads: the base's
(:class:`~coca_eval.generation.params.FamilyParams`), the protocol, and where LongBench's rows come
from (``data``: ``hub``, ``smoke`` for the set this project ships, or a local folder or ``data.zip``),
with ``subset`` ``e`` for LongBench-E's length-balanced files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import (
    PROMPT_AND_ANSWER,
    PROMPT_ONLY,
    FamilyParams,
    FamilyPresetParams,
    make_family_params,
    refuse_vllm_dynamic,
)
from coca_eval.longbench.tasks import E_NAMES, NAMES, task_of
from coca_eval.params import require_choice

EXACT, PUBLISHED = "exact", "longbench"
PROTOCOLS = (EXACT, PUBLISHED)
SUBSETS = ("full", "e")
SMOKE = "smoke"
SMOKE_DIR = Path(__file__).with_name("smoke")


@dataclass(frozen=True)
class LongBenchParams(FamilyParams):
    """Everything that changes a LongBench number. Under ``protocol longbench`` a length is ``pred.py``'s
    ``max_length`` (the prompt's truncation budget, the answer decoded past it); under ``exact`` it is N
    = prompt + answer budget."""

    tasks: tuple[str, ...] = NAMES
    protocol: str = EXACT
    data: str = SMOKE
    subset: str = "full"

    FILES = ("chat_template",)

    @property
    def length_counts(self) -> str:  # type: ignore[override]
        return PROMPT_ONLY if self.protocol == PUBLISHED else PROMPT_AND_ANSWER

    def answer_budget(self, task: str) -> int:
        return task_of(task).answer_budget

    def prompt_length(self, length: int, task: str) -> int:
        return length if self.protocol == PUBLISHED else length - self.answer_budget(task)

    def longest_sequence(self) -> int:
        extra = max(self.answer_budget(t) for t in self.tasks) if self.protocol == PUBLISHED else 0
        return max(self.lengths) + extra

    def names_the_hub(self, option: str, value: str) -> bool:
        return option == "data" and value in ("hub", SMOKE)

    def identity(self) -> dict[str, Any]:
        from coca_eval.data.published_rows import files_fingerprint
        from coca_eval.longbench.data import row_files

        values = super().identity()
        if self.data not in ("hub", SMOKE):
            values["data"] = files_fingerprint(row_files(self.data, self.tasks, self.subset))
        return values

    @property
    def rows(self) -> str:
        """The ``data`` the reader takes: the smoke set's folder for ``smoke``."""
        return str(SMOKE_DIR) if self.data == SMOKE else self.data


class LongBenchPresetParams(FamilyPresetParams):
    """What a longbench preset file may set, in YAML's types."""

    protocol: Literal[PROTOCOLS] = None
    subset: Literal[SUBSETS] = None


def make_longbench_params(values: dict[str, Any]) -> LongBenchParams:
    params = make_family_params(LongBenchParams, values, "longbench", NAMES)
    require_choice("--protocol", params.protocol, PROTOCOLS)
    require_choice("--subset", params.subset, SUBSETS)
    if params.subset == "e":
        outside = [t for t in params.tasks if t not in E_NAMES]
        if outside:
            raise CocaEvalError(f"LongBench-E has no {outside[0]} (its tasks: {', '.join(E_NAMES)})")
    local = params.data not in ("hub", SMOKE)
    if params.data is None or (local and not Path(params.data).expanduser().exists()):
        raise CocaEvalError(f"--data {params.data}: no such file or directory (hub, smoke, or a folder)")
    return params


def check_methods(params: LongBenchParams, methods) -> None:
    """Read and check every row of every task before a model loads."""
    from coca_eval.longbench.data import task_rows

    for task in params.tasks:
        task_rows(params.rows, task, params.subset)
    refuse_vllm_dynamic(methods)


def shortest_length(params: LongBenchParams) -> tuple[int, str]:
    """The shortest N every task can build: one prompt token, and under ``exact`` the answer budget."""
    from coca_eval.lengths import shortest_answered

    return shortest_answered(params)
