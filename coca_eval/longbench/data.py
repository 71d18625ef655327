"""LongBench v1's published rows: ``THUDM/LongBench`` from the hub (``--data hub``: its ``data.zip``,
read in place) or a local folder in that layout (``--data DIR``: ``DIR/data/<task>.jsonl`` as the zip
unpacks, or ``DIR/<task>.jsonl``, or the ``data.zip`` itself). LongBench-E's length-balanced subsets
are the ``<task>_e.jsonl`` files beside them.

A row holds ``input`` (the question, or the code's next-line cue), ``context`` (the document(s)),
``answers`` (the references), ``length`` (LongBench's own count: words, characters for Chinese),
``all_classes`` (the labels of the classification tasks, else null), ``language`` and ``_id``. Every
row is checked when read, before any model loads: a missing file, a row that is not JSON, a missing
or mistyped field, an ``_id`` held twice is one line naming the file, the row and the field.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from coca_eval.data.published_rows import file_rows, from_the_hub, json_lines, refuse_repeats, require_columns
from coca_eval.errors import CocaEvalError

HUB, HUB_ID, ZIP = "hub", "THUDM/LongBench", "data.zip"
COLUMNS = ("input", "context", "answers", "length", "all_classes", "language", "_id")
FETCH = (
    "download data.zip from the hub's THUDM/LongBench, unzip it and pass --data with the folder holding data/"
)


@dataclass(frozen=True)
class LongBenchRow:
    task: str
    input: str
    context: str
    answers: tuple[str, ...]
    length: int
    all_classes: tuple[str, ...] | None
    language: str
    id: str
    where: str  # "FILE row I", as messages name it
    raw: dict = field(compare=False, repr=False)

    def fields(self) -> dict:
        """What ``pred.py`` fills the prompt template from: the row as published."""
        return self.raw


def file_name(task: str, subset: str = "full") -> str:
    return f"{task}_e.jsonl" if subset == "e" else f"{task}.jsonl"


def _text(raw: dict, name: str, where: str) -> str:
    if not isinstance(raw[name], str):
        raise CocaEvalError(f"{where}: {name}: not text")
    return raw[name]


def _texts(value: Any, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CocaEvalError(f"{where}: {name}: not a list of texts")
    return tuple(value)


def check_row(raw: Any, task: str, where: str) -> LongBenchRow:
    """A row as read, or one line naming the row and the field that is wrong."""
    require_columns(raw, COLUMNS, where)
    answers = _texts(raw["answers"], "answers", where)
    if not any(answer.strip() for answer in answers):  # blank references would score any output
        raise CocaEvalError(f"{where}: answers: no reference (none but blank ones)")
    length = raw["length"]
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise CocaEvalError(f"{where}: length: not a count")
    classes = None if raw["all_classes"] is None else _texts(raw["all_classes"], "all_classes", where)
    text = {name: _text(raw, name, where) for name in ("input", "context", "language", "_id")}
    return LongBenchRow(
        task, text["input"], text["context"], answers, length, classes, text["language"], text["_id"],
        where, raw,
    )  # fmt: skip


def _zip_rows(archive: Path, name: str) -> tuple[list[Any], str] | None:
    try:
        with zipfile.ZipFile(archive) as opened:
            member = next((m for m in opened.namelist() if m.split("/")[-1] == name), None)
            if member is None:
                return None
            text = opened.read(member).decode("utf-8")
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"{archive}: not a readable zip of LongBench's data ({exc})") from None
    where = f"{archive}:{member}"
    return json_lines(text, where), where


def _hub_zip() -> Path:
    with from_the_hub(HUB_ID, FETCH):
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(HUB_ID, ZIP, repo_type="dataset"))


def task_file(data: str, task: str, subset: str = "full") -> Path:
    """The local file that holds ``task``'s rows under ``--data`` (a folder or a zip)."""
    root = Path(data).expanduser()
    if root.is_file():
        return root
    name = file_name(task, subset)
    found = [p for p in (root / "data" / name, root / name) if p.is_file()]
    if not found:
        raise CocaEvalError(f"--data {data}: no data/{name} (LongBench's {task}); {FETCH}")
    return found[0]


@cache
def task_rows(data: str, task: str, subset: str = "full") -> tuple[LongBenchRow, ...]:
    """Every row of ``task`` under ``data`` (``hub``, a folder, or ``data.zip``), checked."""
    path = _hub_zip() if data == HUB else task_file(data, task, subset)
    if path.suffix == ".zip":
        read = _zip_rows(path, file_name(task, subset))
        if read is None:
            raise CocaEvalError(f"--data {data}: {path} holds no {file_name(task, subset)}; {FETCH}")
        raws, where = read
    else:
        raws, where = file_rows(path), str(path)
    if not raws:
        raise CocaEvalError(f"{where}: no rows of LongBench's {task}")
    rows = [check_row(raw, task, f"{where} row {i}") for i, raw in enumerate(raws)]
    return refuse_repeats(rows, lambda r: r.id, "_id")


def row_files(data: str, tasks, subset: str = "full") -> list[Path]:
    """The local files ``--data`` names for ``tasks`` (for the run's identity)."""
    return list(dict.fromkeys(task_file(data, t, subset) for t in tasks))
