"""Parameters of the ``graphwalks`` task, checked before any model loads: the base's
(:class:`~coca_eval.generation.params.FamilyParams`) and where the graphs come from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import (
    FamilyParams,
    FamilyPresetParams,
    make_family_params,
    refuse_vllm_dynamic,
)
from coca_eval.graphwalks.prompts import ANSWER_BUDGET, INSTRUCTIONS, QUESTION, TASKS
from coca_eval.params import require_choice

GENERATE, OPENAI = "generate", "openai"
SOURCES = (GENERATE, OPENAI)


@dataclass(frozen=True)
class GraphwalksParams(FamilyParams):
    """Everything that changes a GraphWalks number. ``data`` is read with ``--source openai`` only
    (None there: the hub)."""

    tasks: tuple[str, ...] = tuple(TASKS)
    source: str = GENERATE
    data: str | None = None

    FILES = ("chat_template",)

    def answer_budget(self, task: str) -> int:
        return ANSWER_BUDGET

    def names_the_hub(self, option: str, value: str) -> bool:
        return (option, value) == ("data", "hub")

    def identity(self) -> dict[str, Any]:
        from coca_eval.graphwalks.data import folder_fingerprint

        values = super().identity()
        if self.data not in (None, "hub"):
            values["data"] = folder_fingerprint(self.data)
        return values

    @property
    def rows(self) -> str:
        return self.data or "hub"


class GraphwalksPresetParams(FamilyPresetParams):
    """What a graphwalks preset file may set, in YAML's types."""

    source: Literal[SOURCES] = None


def make_graphwalks_params(values: dict[str, Any]) -> GraphwalksParams:
    params = make_family_params(GraphwalksParams, values, "graphwalks", tuple(TASKS))
    require_choice("--source", params.source, SOURCES)
    if params.data is not None and params.source != OPENAI:
        raise CocaEvalError("--data names OpenAI's rows: it needs --source openai")
    if params.data not in (None, "hub") and not Path(params.data).expanduser().exists():
        raise CocaEvalError(f"--data {params.data}: no such file or directory")
    return params


def check_methods(params: GraphwalksParams, methods) -> None:
    """Read and check every published row before a model loads (``--source openai``)."""
    if params.source == OPENAI:
        from coca_eval.graphwalks.data import graph_rows

        rows = graph_rows(params.rows)
        missing = [t for t in params.tasks if not any(r.problem_type == t for r in rows)]
        if missing:
            raise CocaEvalError(f"--data {params.rows}: no {missing[0]} rows")
    refuse_vllm_dynamic(methods)


def shortest_length(params: GraphwalksParams) -> tuple[int, str]:
    """The shortest N a generated prompt can be: its fixed words, the answer budget and a token of
    edges (OpenAI's rows are as long as they are, and binned, so any length reads them)."""
    from coca_eval.lengths import shortest_answered, words_of

    if params.source == OPENAI:
        return 1, "one token"
    fixed = words_of(INSTRUCTIONS, QUESTION.replace("{operation}", "x " * 12))
    return shortest_answered(params, lambda task: (fixed, "the instructions and the operation"))
