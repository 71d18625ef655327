"""LongBench v2's published questions: ``THUDM/LongBench-v2`` from the hub (``--data hub``: its
``data.json``) or a local copy of that file (``--data FILE``, or a folder holding ``data.json``; a
JSON list as published, or JSON lines). ``smoke`` names the smoke set this project ships.

A question holds ``_id``, ``domain`` and ``sub_domain``, ``difficulty`` (easy or hard), ``length``
(LongBench v2's own class by words: short, medium or long), ``question``, ``choice_A`` to ``choice_D``,
``answer`` (one letter A-D) and ``context``. Every question is checked when read, before any model
loads: a missing or mistyped field, an answer that is not a letter A-D, a domain, difficulty or length
class LongBench v2 does not have, an ``_id`` held twice is one line naming the file, the row and the
field. The domains are the family's tasks (``single_document_qa`` ...), so a cell is one domain at one
length and the report adds LongBench v2's own table over all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from coca_eval.data.published_rows import from_the_hub, json_lines, refuse_repeats, require_columns
from coca_eval.errors import CocaEvalError
from coca_eval.files import read_user_text

HUB, HUB_ID, FILE = "hub", "THUDM/LongBench-v2", "data.json"
CHOICES = ("A", "B", "C", "D")
COLUMNS = ("_id", "domain", "sub_domain", "difficulty", "length", "question", "context", "answer") + tuple(
    f"choice_{c}" for c in CHOICES
)
DOMAINS = {
    "single_document_qa": "Single-Document QA",
    "multi_document_qa": "Multi-Document QA",
    "long_in_context_learning": "Long In-context Learning",
    "long_dialogue_history": "Long-dialogue History Understanding",
    "code_repository": "Code Repository Understanding",
    "long_structured_data": "Long Structured Data Understanding",
}
DIFFICULTIES, LENGTH_CLASSES = ("easy", "hard"), ("short", "medium", "long")
FETCH = "download data.json from the hub's THUDM/LongBench-v2 and pass --data with its path"


@dataclass(frozen=True)
class QuestionRow:
    id: str
    task: str  # the domain's task name
    sub_domain: str
    difficulty: str
    length_class: str
    question: str
    choices: tuple[str, str, str, str]
    answer: str
    context: str
    where: str  # "FILE row I", as messages name it

    @property
    def answers(self) -> tuple[str, ...]:
        return (self.answer,)


def _text(raw: dict, name: str, where: str) -> str:
    if not isinstance(raw[name], str):
        raise CocaEvalError(f"{where}: {name}: not text")
    return raw[name]


def _one_of(raw: dict, name: str, allowed, where: str) -> str:
    value = _text(raw, name, where)
    if value not in allowed:
        raise CocaEvalError(f"{where}: {name}: {value!r} is not one of {', '.join(allowed)}")
    return value


def check_question(raw: Any, where: str) -> QuestionRow:
    """A question as read, or one line naming the row and the field that is wrong."""
    require_columns(raw, COLUMNS, where)
    domain = _one_of(raw, "domain", tuple(DOMAINS.values()), where)
    task = next(name for name, title in DOMAINS.items() if title == domain)
    choices = tuple(_text(raw, f"choice_{c}", where) for c in CHOICES)
    return QuestionRow(
        _text(raw, "_id", where), task, _text(raw, "sub_domain", where),
        _one_of(raw, "difficulty", DIFFICULTIES, where), _one_of(raw, "length", LENGTH_CLASSES, where),
        _text(raw, "question", where), choices, _one_of(raw, "answer", CHOICES, where),
        _text(raw, "context", where), where,
    )  # fmt: skip


def _hub_file() -> Path:
    with from_the_hub(HUB_ID, FETCH):
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(HUB_ID, FILE, repo_type="dataset"))


def question_file(data: str) -> Path:
    """The file ``--data`` names: the hub's copy, the file itself, or ``data.json`` in the folder."""
    if data == HUB:
        return _hub_file()
    path = Path(data).expanduser()
    if path.is_dir():
        path = path / FILE
    if not path.is_file():
        raise CocaEvalError(f"--data {data}: no {FILE} (LongBench v2's questions); {FETCH}")
    return path


def _raw_questions(path: Path) -> list[Any]:
    text = read_user_text(path)
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CocaEvalError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
        return rows
    return json_lines(text, path)


@cache
def all_questions(data: str) -> tuple[QuestionRow, ...]:
    """Every question under ``data``, checked, each ``_id`` once."""
    path = question_file(data)
    raws = _raw_questions(path)
    if not raws:
        raise CocaEvalError(f"{path}: no questions of LongBench v2")
    rows = [check_question(raw, f"{path} row {i}") for i, raw in enumerate(raws)]
    return refuse_repeats(rows, lambda r: r.id, "_id")


def domain_questions(data: str, task: str) -> tuple[QuestionRow, ...]:
    """The questions of one domain, in the file's order."""
    rows = tuple(r for r in all_questions(data) if r.task == task)
    if not rows:
        raise CocaEvalError(f"--data {data}: no question of LongBench v2's {DOMAINS[task]} (task {task})")
    return rows
