"""Where BABILong's samples come from.

``--source generate``: bAbI samples, from bAbI's task files (``--babi-data DIR``: the ``tasks_1-20_v1-2``
folder or one of its language folders; a task's file is ``qa{N}_*_test.txt``) or, for qa1-qa3 without
files, from this project's own generator (:mod:`coca_eval.babilong.babi`), run offline.

``--source babilong``: BABILong's prepared samples, from the hub (``RMT-team/babilong-1k-samples`` by
default, or the dataset ``--data`` names, such as ``RMT-team/babilong``'s 100 samples up to 10M: one
configuration per length, ``0k`` .. ``128k`` or more, a split per task; rows ``input``, ``question``,
``target``) or ``--data DIR`` holding ``DIR/<length>/<task>.jsonl`` in the same rows.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from coca_eval.babilong.babi import BabiSample, generate_babi, parse_babi, read_babi
from coca_eval.errors import CocaEvalError
from coca_eval.files import read_user_text
from coca_eval.references import check_references

HUB_ID = "RMT-team/babilong-1k-samples"
GENERATED = ("qa1", "qa2", "qa3")
GENERATED_STORIES = 200  # enough single-question samples for any --samples up to about 700


HUB = "hub"  # --babi-data hub: bAbI's archive from the hub, the task files a run needs unpacked
BABI_REPO, BABI_ARCHIVE = "facebook/babi_qa", "data/tasks_1-20_v1-2.tar.gz"


@cache
def babi_samples(task: str, babi_data: str | None, seed: int) -> tuple[BabiSample, ...]:
    """The task's bAbI samples: its test file in ``babi_data`` (``hub``: from bAbI's archive on the
    hub), or ours for qa1-qa3."""
    if babi_data is None:
        if task not in GENERATED:
            raise CocaEvalError(
                f"{task} needs bAbI's task files: pass --babi-data hub to fetch them ({BABI_REPO}, "
                f"{BABI_ARCHIVE}) or --babi-data with the unpacked tasks_1-20_v1-2 folder; qa1-qa3 run "
                "without them"
            )
        return tuple(parse_babi(generate_babi(task, GENERATED_STORIES, seed), f"generated {task}"))
    if babi_data == HUB:
        return tuple(read_babi(babi_hub_file(task)))
    root = Path(babi_data).expanduser()
    found = sorted(root.glob(f"{task}_*_test.txt")) + sorted(root.glob(f"en/{task}_*_test.txt"))
    if not found:
        raise CocaEvalError(
            f"--babi-data {babi_data} has no {task}_*_test.txt (bAbI's tasks_1-20_v1-2 files)"
        )
    return tuple(read_babi(found[0]))


def babi_hub_file(task: str) -> Path:
    """The task's English test file, unpacked once from bAbI's archive on the hub into the cache."""
    from coca_eval.assets import cache_dir
    from coca_eval.data.hub_archive import cached_member

    return cached_member(
        BABI_REPO,
        BABI_ARCHIVE,
        f"tasks_1-20_v1-2/en/{task}_*_test.txt",
        cache_dir() / "babi" / f"{task}_test.txt",
        f"{task} reads bAbI's tasks from {BABI_REPO} ({BABI_ARCHIVE}) on the hub, which could not be "
        "fetched ({reason}); download tasks_1-20_v1-2 and pass --babi-data with its folder",
        f"{task}: bAbI's archive has no tasks_1-20_v1-2/en/{task}_*_test.txt",
    )


class BabilongRow(BaseModel):
    """A row of BABILong's prepared sets: the long context, the question and the target."""

    model_config = ConfigDict(extra="allow", frozen=True)

    input: str
    question: str
    target: str


def split_name(length: int) -> str:
    """BABILong's name for a length: ``0k``, ``1k`` for 1024, ``128k``, ``1M`` for 1048576."""
    if length % 1024:
        raise CocaEvalError(f"--source babilong has lengths 0k..10M in whole k (1024 tokens); got {length}")
    if length and length % (1024 * 1024) == 0:
        return f"{length // (1024 * 1024)}M"
    return f"{length // 1024}k"


def label_tokens(name: str) -> int:
    """What BABILong's length name means: ``Nk`` is N x 1000 GPT-2 tokens, ``NM`` N x 1,000,000
    (``data/create_tasks.py`` l. 27-28, the prompt's 300 kept inside, l. 32); ``0k`` is facts alone."""
    number, unit = name[:-1], name[-1]
    return int(number) * (1000 if unit == "k" else 1_000_000)


def check_row_length(row: BabilongRow, name: str, where: str) -> None:
    """Refuse a row far longer than its length name says (more than twice): it would be read as a
    ``name`` sample. Counted in words, which no subword tokenizer makes fewer tokens of, so the check
    needs no tokenizer; a ``0k`` row (facts alone, no budget) is not checked."""
    limit = label_tokens(name)
    words = len(row.input.split())
    if limit and words > 2 * limit:
        raise CocaEvalError(
            f"{where}: its input holds {words} words (at least as many tokens), over twice BABILong's "
            f"{name} ({limit} tokens): not a {name} sample"
        )


def hub_dataset(data: str | None) -> str | None:
    """The hub dataset ``--data`` names (``None``: BABILong's 1000-sample sets; an ``owner/name`` that
    is not a local path: that dataset, e.g. ``RMT-team/babilong``), or None for a local folder."""
    if data is None:
        return HUB_ID
    if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", data) and not Path(data).expanduser().exists():
        return data
    return None


@cache
def babilong_rows(task: str, length: int, data: str | None) -> tuple[BabilongRow, ...]:
    """BABILong's prepared rows of ``task`` at ``length``, from ``--data`` or the hub; a row whose target
    is empty after normalisation is refused, naming it (:mod:`coca_eval.references`)."""
    name = split_name(length)
    hub_id = hub_dataset(data)
    if hub_id is None:
        path = Path(data).expanduser() / name / f"{task}.jsonl"
        if not path.is_file():
            raise CocaEvalError(
                f"--data {data} has no {name}/{task}.jsonl (rows with input, question, target)"
            )
        rows = []
        for number, line in enumerate(read_user_text(path).splitlines(), 1):
            if line.strip():
                try:
                    row = BabilongRow.model_validate(json.loads(line))
                except (json.JSONDecodeError, ValidationError) as exc:
                    raise CocaEvalError(f"{path} line {number}: {str(exc).splitlines()[0]}") from None
                check_references([row.target], f"{path} line {number}")
                check_row_length(row, name, f"{path} line {number}")
                rows.append(row)
        return tuple(rows)
    import datasets

    try:
        split = datasets.load_dataset(hub_id, name, split=task)
    except Exception as exc:  # offline, an unknown length or task: one line with the remedy
        raise CocaEvalError(
            f"{task} at {name} reads {hub_id} from the hub, which failed ({type(exc).__name__}); save its "
            f"rows as DIR/{name}/{task}.jsonl and pass --data DIR"
        ) from None
    rows = tuple(BabilongRow.model_validate(dict(row)) for row in split)
    for number, row in enumerate(rows):
        check_references([row.target], f"{hub_id} {name} {task} row {number}")
        check_row_length(row, name, f"{hub_id} {name} {task} row {number}")
    return rows
