"""Parameters of the ``longbench`` (v1) and ``longbench_v2`` tasks, checked before any model loads: the
base's (:class:`~coca_eval.generation.params.FamilyParams`), the protocol, and where the rows come
from (``data``: ``hub``, ``smoke`` for the set this project ships, or a local path), with v1's
``subset`` (``e`` for LongBench-E's length-balanced files) and v2's ``context`` (the document, or none
for its "w/o context" baseline)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import StrictBool

from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import FamilyPresetParams, make_family_params, refuse_vllm_dynamic
from coca_eval.generation.published import PublishedSetParams
from coca_eval.longbench.tasks import E_NAMES, NAMES, task_of
from coca_eval.longbench.v2_tasks import ANSWER_BUDGET, CONTEXTS, REASONING_BUDGET
from coca_eval.longbench.v2_tasks import NAMES as V2_NAMES
from coca_eval.params import require_choice

EXACT, PUBLISHED = "exact", "longbench"
PROTOCOLS = (EXACT, PUBLISHED)
SUBSETS = ("full", "e")
SMOKE = "smoke"
SMOKE_DIR = Path(__file__).with_name("smoke")


@dataclass(frozen=True)
class LongBenchSetParams(PublishedSetParams):
    """What both LongBench versions share. Under ``protocol longbench`` a length is ``pred.py``'s
    ``max_length`` (the prompt's truncation budget, the answer decoded past it); under ``exact`` it is N
    = prompt + answer budget (:class:`~coca_eval.generation.published.PublishedSetParams`)."""

    PUBLISHED = PUBLISHED
    SMOKE_PATH = SMOKE_DIR

    def names_the_hub(self, option: str, value: str) -> bool:
        return option == "data" and value in ("hub", SMOKE)

    @property
    def rows(self) -> str:
        """The ``data`` the reader takes: the smoke set's path for ``smoke``."""
        return str(self.SMOKE_PATH) if self.data == SMOKE else self.data

    def cell_keys(self) -> dict[str, Any]:
        """What a cell records of this version's own choices."""
        raise NotImplementedError


@dataclass(frozen=True)
class LongBenchParams(LongBenchSetParams):
    """Everything that changes a LongBench v1 number."""

    tasks: tuple[str, ...] = NAMES
    subset: str = "full"

    def answer_budget(self, task: str) -> int:
        return task_of(task).answer_budget

    def local_files(self) -> list[Path]:
        from coca_eval.longbench.data import row_files

        return row_files(self.data, self.tasks, self.subset)

    def cell_keys(self) -> dict[str, Any]:
        return {"subset": self.subset}


@dataclass(frozen=True)
class LongBenchV2Params(LongBenchSetParams):
    """Everything that changes a LongBench v2 number: its domains and whether the document is given
    (``context`` none: the "w/o context" baseline)."""

    tasks: tuple[str, ...] = V2_NAMES
    context: str = "document"
    cot: bool = False

    SMOKE_PATH = SMOKE_DIR / "v2" / "data.json"

    def answer_budget(self, task: str) -> int:
        """The answer's 128 tokens, or under ``cot`` the reasoning's 1,024 that N counts."""
        return REASONING_BUDGET if self.cot else ANSWER_BUDGET

    def local_files(self) -> list[Path]:
        from coca_eval.longbench.v2_data import question_file

        return [question_file(self.data)]

    def cell_keys(self) -> dict[str, Any]:
        return {"context": self.context, "cot": self.cot}


class LongBenchPresetParams(FamilyPresetParams):
    """What a longbench preset file may set, in YAML's types."""

    protocol: Literal[PROTOCOLS] = None
    subset: Literal[SUBSETS] = None


class LongBenchV2PresetParams(FamilyPresetParams):
    """What a longbench_v2 preset file may set, in YAML's types."""

    protocol: Literal[PROTOCOLS] = None
    context: Literal[tuple(CONTEXTS)] = None
    cot: StrictBool = None


def _check_shared(params: LongBenchSetParams) -> None:
    require_choice("--protocol", params.protocol, PROTOCOLS)
    params.check_data()


def make_longbench_params(values: dict[str, Any]) -> LongBenchParams:
    params = make_family_params(LongBenchParams, values, "longbench", NAMES)
    _check_shared(params)
    require_choice("--subset", params.subset, SUBSETS)
    if params.subset == "e":
        outside = [t for t in params.tasks if t not in E_NAMES]
        if outside:
            raise CocaEvalError(f"LongBench-E has no {outside[0]} (its tasks: {', '.join(E_NAMES)})")
    return params


def make_longbench_v2_params(values: dict[str, Any]) -> LongBenchV2Params:
    params = make_family_params(LongBenchV2Params, values, "longbench_v2", V2_NAMES)
    _check_shared(params)
    require_choice("--context", params.context, tuple(CONTEXTS))
    if params.cot and params.context == "none":
        raise CocaEvalError("--cot reasons over the document: it does not go with --context none")
    if params.context == "none" and params.protocol != PUBLISHED:
        raise CocaEvalError(
            "--context none (the question alone) has no document to fill N with: use --protocol longbench"
        )
    return params


def check_methods(params: LongBenchSetParams, methods) -> None:
    """Read and check every row of every task before a model loads."""
    if isinstance(params, LongBenchV2Params):
        from coca_eval.longbench.v2_data import domain_questions

        for task in params.tasks:
            domain_questions(params.rows, task)
    else:
        from coca_eval.longbench.data import task_rows

        _require_libraries(params.tasks)
        for task in params.tasks:
            task_rows(params.rows, task, params.subset)
    refuse_vllm_dynamic(methods)


def libraries_needed(tasks) -> list[str]:
    """The scoring libraries the tasks' metrics import (the ``longbench`` extra), in install order."""
    from coca_eval.longbench.averages import CHINESE_TASKS
    from coca_eval.longbench.scoring import METRIC_OF_TASK, code_similarity, rouge_l, rouge_l_zh

    needed = {
        "rouge": any(METRIC_OF_TASK[t] in (rouge_l, rouge_l_zh) for t in tasks),
        "jieba": any(t in CHINESE_TASKS for t in tasks),
        "fuzzywuzzy": any(METRIC_OF_TASK[t] is code_similarity for t in tasks),
    }
    return [name for name, wanted in needed.items() if wanted]


def _require_libraries(tasks) -> None:
    """LongBench's metrics score with its own libraries: one missing is one line before a model loads,
    not a traceback after the answers are decoded."""
    from importlib.util import find_spec

    missing = [name for name in libraries_needed(tasks) if find_spec(name) is None]
    if missing:
        needed = ", ".join(missing)
        raise CocaEvalError(
            f"LongBench's metrics for these tasks need {needed}: pip install 'coca-eval[longbench]'"
        )


def shortest_length(params: LongBenchSetParams) -> tuple[int, str]:
    """The shortest N every task can build: one prompt token, and under ``exact`` the answer budget."""
    from coca_eval.lengths import shortest_answered

    return shortest_answered(params)
