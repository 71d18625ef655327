"""Parameters of the ``mrcr`` task, checked before any model loads: the base's
(:class:`~coca_eval.generation.params.FamilyParams`) and where the conversations come from."""

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
from coca_eval.mrcr.tasks import DEEPMIND, GENERATE, NAMES, OPENAI, SOURCES, task_of
from coca_eval.params import require_choice


@dataclass(frozen=True)
class MrcrParams(FamilyParams):
    """Everything that changes an MRCR number. ``data`` is read with ``--source openai`` only (None
    there: the hub)."""

    tasks: tuple[str, ...] = NAMES
    source: str = "generate"
    data: str | None = None

    FILES = ("chat_template",)

    def answer_budget(self, task: str) -> int:
        return task_of(task, self.source).answer_budget

    def names_the_hub(self, option: str, value: str) -> bool:
        return (option, value) == ("data", "hub")

    def identity(self) -> dict[str, Any]:
        from coca_eval.data.published_rows import files_fingerprint
        from coca_eval.mrcr.data import row_files

        values = super().identity()
        if self.data not in (None, "hub"):
            values["data"] = files_fingerprint(row_files(self.data, self.source))
        return values

    @property
    def rows(self) -> str:
        return self.data or "hub"

    @property
    def needles(self) -> tuple[int, ...]:
        return tuple(task_of(t).needles for t in self.tasks)


class MrcrPresetParams(FamilyPresetParams):
    """What a mrcr preset file may set, in YAML's types."""

    source: Literal[SOURCES] = None


def tasks_of_needles(needles: str) -> str:
    """``--needles 2,4`` names the tasks ``2needle,4needle``."""
    counts = [part.strip() for part in str(needles).split(",") if part.strip()]
    if not counts or any(f"{c}needle" not in NAMES for c in counts):
        raise CocaEvalError(f"--needles takes 2, 4 and 8, comma-separated (got {needles!r})")
    return ",".join(f"{c}needle" for c in counts)


def make_mrcr_params(values: dict[str, Any]) -> MrcrParams:
    params = make_family_params(MrcrParams, values, "mrcr", NAMES)
    require_choice("--source", params.source, SOURCES)
    if params.data is not None and params.source == GENERATE:
        raise CocaEvalError("--data names published conversations: it needs --source openai or deepmind")
    if params.source == DEEPMIND and params.data in (None, "hub"):
        raise CocaEvalError(
            "--source deepmind reads MRCR v2's CSV files, which are not on the hub: fetch them with "
            "eval_hub's mrcr_v2/download.sh and pass --data with their folder"
        )
    if params.data not in (None, "hub") and not Path(params.data).expanduser().exists():
        raise CocaEvalError(f"--data {params.data}: no such file or directory")
    return params


def check_methods(params: MrcrParams, methods) -> None:
    """Read and check every published row before a model loads (``--source openai``/``deepmind``)."""
    if params.source in (OPENAI, DEEPMIND):
        from coca_eval.mrcr.task import PUBLISHED

        rows = PUBLISHED[params.source](params)(params.needles)
        missing = [t for t in params.tasks if not any(r.needles == task_of(t).needles for r in rows)]
        if missing:
            raise CocaEvalError(f"--data {params.rows}: no {missing[0]} rows")
    refuse_vllm_dynamic(methods)


def shortest_length(params: MrcrParams) -> tuple[int, str]:
    """The shortest N a generated conversation can be: the final request's words, each needle's
    request words and its shortest passage, and the answer budget (a floor in any tokenizer: the
    template's frames and a distractor come on top, and a length they do not fit is refused per cell);
    OpenAI's and DeepMind's rows are as long as they are, and binned."""
    if params.source != GENERATE:
        return 1, "one token"
    from coca_eval.lengths import shortest_answered, words_of
    from coca_eval.mrcr.generate import ASKS, FINAL_ASK, PASSAGE_TOKENS

    def fixed(task: str) -> tuple[int, str]:
        needles = task_of(task).needles
        ask = min(words_of(a.format(article="a", form="poem", topic="x")) for a in ASKS)
        words = words_of(FINAL_ASK) + needles * (ask + PASSAGE_TOKENS[0])
        return words, f"the requests' words and {needles} needles' shortest passages' tokens"

    return shortest_answered(params, fixed)
