"""The data of HELMET's long-QA and summarisation tasks, read from ``--data DIR``.

HELMET loads three of these sets from the hub by name (``narrativeqa``, ``xinrongzhang2022/infinitebench``,
``allenai/multi_lexsum`` in ``data.py`` at 4526dfb) and reads two files of its own archive in its judge
scripts (``infbench/longbook_sum_eng_keypoints.jsonl``, ``multi_lexsum/multi_lexsum_val.jsonl``). Here
every one is a JSON-lines file under ``DIR``, each row as the set publishes it:

* ``narrativeqa/test.jsonl``, ``narrativeqa/train.jsonl``: the hub set's splits (``document.text``,
  ``question.text``, ``answers[].text``);
* ``infbench/longbook_{qa,choice,sum}_eng.jsonl``: InfiniteBench's files as its hub repository holds them
  (``id``, ``context``, ``input``, ``answer``, ``options``);
* ``multi_lexsum/multi_lexsum_val.jsonl``: HELMET's validation rows (``id``, ``sources``,
  ``summary/short``, ``summary/long``, ``summary/short_keypoints``), ``multi_lexsum/train.jsonl`` the hub
  set's training split (for the demonstrations);
* ``infbench/longbook_sum_eng_keypoints.jsonl`` (``id``, ``keypoints``), read for the judge only.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from coca_eval.errors import CocaEvalError
from coca_eval.helmet.data import HUB, data_file, read_rows


class _Text(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    text: str


class NarrativeRow(BaseModel):
    """A NarrativeQA question: its story (``document.text``), question and answers."""

    model_config = ConfigDict(extra="allow", frozen=True)

    document: _Text
    question: _Text
    answers: list[_Text]


class InfRow(BaseModel):
    """An InfiniteBench row: ``input`` is the question, ``answer`` the references, ``options`` the
    four choices of the multiple-choice set."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: int
    context: str
    input: str = ""
    answer: list[str]
    options: list[str] = Field(default_factory=list)


class LexsumRow(BaseModel):
    """A Multi-LexSum case: its source documents, short summary (the reference), long summary (the judge's
    expert summary) and the short summary's key points (the judge's recall list)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    id: str
    sources: list[str]
    short: str | None = Field(None, alias="summary/short")
    long: str | None = Field(None, alias="summary/long")
    keypoints: list[str] = Field(default_factory=list, alias="summary/short_keypoints")


class KeypointRow(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: int
    keypoints: list[str]


INFBENCH_FILES = {
    "infbench_qa": "infbench/longbook_qa_eng.jsonl",
    "infbench_choice": "infbench/longbook_choice_eng.jsonl",
    "infbench_sum": "infbench/longbook_sum_eng.jsonl",
}
NARRATIVEQA_FILES = ("narrativeqa/test.jsonl", "narrativeqa/train.jsonl")
LEXSUM_FILES = ("multi_lexsum/multi_lexsum_val.jsonl", "multi_lexsum/train.jsonl")
INFBENCH_KEYPOINTS = "infbench/longbook_sum_eng_keypoints.jsonl"


def read(task: str, relative: str, data: str | None, model: type[BaseModel]) -> tuple:
    """The rows of ``relative`` under ``--data`` (a missing file or bad line: one line naming it)."""
    if data != HUB and (data is None or not (Path(data).expanduser() / relative).is_file()):
        where = f"{data}/{relative} does not exist" if data else "no --data directory was given"
        raise CocaEvalError(
            f"{task} reads {relative} under --data ({where}): the set's rows as JSON lines, laid out as "
            "docs/helmet.md says (Long QA and summarisation)"
        )
    return read_rows(str(data_file(task, relative, data)), model)


def infbench_keypoints(data: str | None) -> dict[int, list[str]]:
    """InfiniteBench summaries' key points by row id (the judge's recall list)."""
    return {r.id: r.keypoints for r in read("infbench_sum", INFBENCH_KEYPOINTS, data, KeypointRow)}
