"""The parameters of a family that reads a published set (LongBench, AA-LCR): ``--protocol`` exact or
the set's own, and ``--data`` naming its rows (``hub``, ``smoke`` for the set this project ships, or
local files).

Under the published protocol a length bounds the prompt the set's own harness builds, the answer
decoded past it; under ``exact`` a length is N = prompt + answer budget, as for every family. Local
rows enter a run's identity by their files' content, so two runs over different copies never share
a journal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.generation.params import PROMPT_AND_ANSWER, PROMPT_ONLY, FamilyParams

EXACT, SMOKE = "exact", "smoke"
NAMED_DATA = ("hub", SMOKE)  # ``--data`` values that name a set, not a local path


@dataclass(frozen=True)
class PublishedSetParams(FamilyParams):
    """What every published set's parameters share. ``PUBLISHED`` names the set's own protocol
    (``longbench``, ``published``); ``DATA_FORMS`` is how a refusal of ``--data`` words the local form."""

    protocol: str = EXACT
    data: str = SMOKE

    PUBLISHED = "published"
    DATA_FORMS = "hub, smoke, or a path"
    FILES = ("chat_template",)

    @property
    def length_counts(self) -> str:  # type: ignore[override]
        return PROMPT_ONLY if self.protocol == self.PUBLISHED else PROMPT_AND_ANSWER

    def prompt_length(self, length: int, task: str) -> int:
        return length if self.protocol == self.PUBLISHED else length - self.answer_budget(task)

    def longest_sequence(self) -> int:
        extra = max(self.answer_budget(t) for t in self.tasks) if self.protocol == self.PUBLISHED else 0
        return max(self.lengths) + extra

    def identity(self) -> dict[str, Any]:
        """Local rows by their files' content (:meth:`local_files`), a named set by its name."""
        from coca_eval.data.published_rows import files_fingerprint

        values = super().identity()
        if self.data not in NAMED_DATA:
            values["data"] = files_fingerprint(self.local_files())
        return values

    def local_files(self) -> list[Path]:
        """The files local ``--data`` rows are read from."""
        raise NotImplementedError

    def check_data(self) -> None:
        """``--data`` names a set or local rows that exist, checked before any model loads."""
        local = self.data not in NAMED_DATA
        if self.data is None or (local and not Path(self.data).expanduser().exists()):
            raise CocaEvalError(f"--data {self.data}: no such file or directory ({self.DATA_FORMS})")
