"""HELMET's data files: where each task's file sits in HELMET's ``data`` directory, read and typed.

HELMET keeps its pre-retrieved RAG passages and its re-ranking sets in one archive on the hub
(``princeton-nlp/HELMET``, ``data.tar.gz``, about 34 GB unpacked); ``--data DIR`` names the unpacked
``data`` directory. A file is read once per process and each line checked against its task's row
model, so a malformed file is one line naming the file and the line, before any model loads; so is a
row whose answers are all empty after normalisation (it would score any output 1:
:mod:`coca_eval.references`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.references import check_references

ARCHIVE = "https://huggingface.co/datasets/princeton-nlp/HELMET/resolve/main/data.tar.gz"


class Passage(BaseModel):
    """A retrieved passage: its title and text (``has_answer`` where the file marks gold passages)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    title: str = ""
    text: str
    has_answer: bool | None = None


class QaRow(BaseModel):
    """A RAG question (HELMET's ``kilt/*.jsonl``): the question, its answers, its passages in the
    retriever's order; ``id`` and ``s_pop`` (PopQA's subject popularity) where the file has them."""

    model_config = ConfigDict(extra="allow", frozen=True)

    question: str
    answers: list[str]
    ctxs: list[Passage]
    id: str | int | None = None
    s_pop: float | None = None

    @property
    def references(self) -> tuple[str, ...]:
        return tuple(self.answers)


def missing_data(task: str, relative: str, data: str | None) -> CocaEvalError:
    """The one line for a task whose HELMET file is not there: what to fetch and the option to pass."""
    where = f"{data}/{relative} does not exist" if data else "no --data directory was given"
    return CocaEvalError(
        f"{task} reads HELMET's {relative} ({where}): download {ARCHIVE}, unpack it, and pass "
        "--data with the unpacked data directory (or --data hub to fetch it)"
    )


@cache
def read_rows(path: str, model: type[BaseModel]) -> tuple:
    """Every line of a JSON-lines file as ``model``; a bad line is one error naming file and line."""
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = model.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError) as exc:
                    reason = (
                        str(exc).splitlines()[0] if isinstance(exc, json.JSONDecodeError) else _first(exc)
                    )
                    raise CocaEvalError(f"{path} line {number}: {reason}") from None
                if hasattr(row, "references"):  # a question's answers (not re-ranking's passage labels)
                    check_references(row.references, f"{path} line {number}")
                rows.append(row)
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"cannot read {path} ({type(exc).__name__})") from None
    if not rows:
        raise CocaEvalError(f"{path} holds no rows")
    return tuple(rows)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    place = ".".join(str(part) for part in error["loc"]) or "the row"
    return f"{place}: {error['msg']}"


HUB = "hub"  # --data hub: HELMET's archive from the hub, the files a run needs unpacked into the cache
HUB_REPO, HUB_ARCHIVE = "princeton-nlp/HELMET", "data.tar.gz"


def data_file(task: str, relative: str, data: str | None) -> Path:
    """``data/relative`` (``--data hub``: unpacked from HELMET's archive on the hub, once), or the
    one-line error of a file that is not there."""
    if data == HUB:
        return hub_file(task, relative)
    if data is None or not (Path(data).expanduser() / relative).is_file():
        raise missing_data(task, relative, data)
    return Path(data).expanduser() / relative


def hub_file(task: str, relative: str) -> Path:
    """``relative`` unpacked from HELMET's archive on the hub, once (see
    :mod:`coca_eval.data.hub_archive`)."""
    from coca_eval.assets import cache_dir
    from coca_eval.data.hub_archive import cached_member

    return cached_member(
        HUB_REPO,
        HUB_ARCHIVE,
        f"data/{relative}",
        cache_dir() / "helmet-data" / relative,
        f"{task} reads HELMET's {relative} from {ARCHIVE}, which could not be fetched ({{reason}}); "
        "download and unpack it, and pass --data with the data directory",
        f"{task}: HELMET's archive has no data/{relative}",
    )


@dataclass(frozen=True)
class ChosenRows:
    """One task's chosen questions, taken by sample index. An index past them (more ``--samples``
    than the file holds) is a one-line refusal naming the task and the count (``HELD``, in the
    task's own words), never an IndexError mid-run."""

    task: str
    rows: tuple

    HELD = "HELMET's file holds {n} questions; ask for fewer --samples"

    def row(self, index: int):
        if index >= len(self.rows):
            raise CocaEvalError(f"{self.task}: {self.HELD.format(n=len(self.rows))}")
        return self.rows[index]
