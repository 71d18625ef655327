"""HELMET's pre-generated recall files, read under ``--protocol helmet`` (under ``exact`` the recall tasks
are generated here).

As HELMET reads them (``load_json_kv`` and ``load_ruler`` in its ``data.py`` at 4526dfb):

* ``json_kv/test_k{k}_dep6.jsonl``: rows with ``context``, ``question``, ``answer`` and ``demos`` (pairs
  of key and value); the first two demonstrations read ``Key: {key}`` / ``Corresponding value: {value}``,
  a blank line after each;
* ``ruler/<task>/validation_{N}.jsonl``: RULER's generated rows, whose fields fill HELMET's template of
  the task (``context``, ``query``, ``type_needle_v``, ...), the references under ``answer`` or
  ``outputs``;
* the questions: the file shuffled by ``--seed`` (numpy's generator, as ``datasets``' ``shuffle``), the
  first ``--samples``.
"""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel, ConfigDict, model_validator

from coca_eval.errors import CocaEvalError
from coca_eval.helmet.data import data_file, read_rows

KV_FILE = "json_kv/test_k{k}_dep6.jsonl"
RULER_FILE = "ruler/{task}/validation_{length}.jsonl"
DEMO = "Key: {key}\nCorresponding value: {value}"


class KvRow(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    context: str
    question: str
    answer: str | list[str]
    demos: list[tuple[str, str]] = []

    @property
    def references(self) -> tuple[str, ...]:
        return (self.answer,) if isinstance(self.answer, str) else tuple(self.answer)


class RulerRow(BaseModel):
    """A RULER row as HELMET formats it: every field fills its template; references under ``answer``
    (else ``outputs``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    context: str
    answer: list[str] | None = None
    outputs: list[str] | None = None

    @model_validator(mode="after")
    def _has_references(self):
        if not (self.answer or self.outputs):
            raise ValueError("a row needs its references under answer or outputs")
        return self

    @property
    def references(self) -> tuple[str, ...]:
        return tuple(self.answer if self.answer else self.outputs)


def first_after_shuffle(rows, samples: int, seed: int) -> tuple:
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(rows))
    return tuple(rows[int(i)] for i in order[: min(samples, len(rows))])


@cache
def load_rows(task: str, relative: str, data: str | None, samples: int, seed: int, kind: str) -> tuple:
    model = KvRow if kind == "json_kv" else RulerRow
    return first_after_shuffle(read_rows(str(data_file(task, relative, data)), model), samples, seed)


def _row(rows: tuple, index: int, task: str):
    if index >= len(rows):
        raise CocaEvalError(f"{task}: HELMET's file holds {len(rows)} rows; ask for fewer --samples")
    return rows[index]


def kv_fields(rows: tuple, index: int, shots: int) -> tuple[dict[str, str], tuple[str, ...]]:
    """Row ``index``'s template fields and references (``json_kv``)."""
    row = _row(rows, index, "json_kv")
    demos = "\n\n".join(DEMO.format(key=k, value=v) for k, v in row.demos[:shots]) + ("\n\n" if shots else "")
    return {"context": row.context, "question": row.question, "demos": demos}, row.references


def ruler_fields(rows: tuple, index: int, task: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """Row ``index``'s fields as HELMET's template takes them, and its references (RULER tasks)."""
    row = _row(rows, index, task)
    values = row.model_dump()
    values["question"] = values.get("query", values.get("question", ""))
    example = values.get("example") or ""
    values["example"] = example + "\n\n" if example else ""
    return {k: v if isinstance(v, str) else str(v) for k, v in values.items()}, row.references
