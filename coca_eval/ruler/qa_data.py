"""SQuAD v2 and HotpotQA dev sets as RULER reads them: unique documents, and per question its answers,
its gold documents and (SQuAD) the other paragraphs of its article, which RULER uses as the first
distractors.

RULER downloads the two dev files directly (``dev-v2.0.json``, ``hotpot_dev_distractor_v1.json``); we
load the same dev sets through ``datasets`` from the hub (``rajpurkar/squad_v2`` validation,
``hotpotqa/hotpot_qa`` distractor validation), or from local files: a file or a directory holding the
original JSON files, or JSONL rows in the hub's formats. Unanswerable SQuAD questions are left out, as
RULER does; a HotpotQA question's gold documents are all ten of its paragraphs, as in RULER.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, model_validator

from coca_eval.errors import CocaEvalError
from coca_eval.references import check_references

HUB = {
    "squad": ("rajpurkar/squad_v2", None, "validation"),
    "hotpotqa": ("hotpotqa/hotpot_qa", "distractor", "validation"),
}
TITLES = {"squad": "SQuAD v2", "hotpotqa": "HotpotQA"}


@dataclass(frozen=True)
class Question:
    query: str
    answers: tuple[str, ...]
    gold: tuple[int, ...]  # indices into the set's documents
    related: tuple[int, ...] = ()  # the other paragraphs of a SQuAD question's article


@dataclass(frozen=True)
class QaSet:
    name: str  # where it came from, for the record
    documents: tuple[str, ...]
    questions: tuple[Question, ...]


def load_qa(dataset: str, path: str | None) -> QaSet:
    """``dataset`` (``squad`` or ``hotpotqa``) from the hub, or from the files at ``path``."""
    if path is None:
        return _from_hub(dataset)
    return _from_files(dataset, path)


@functools.cache
def _from_hub(dataset: str) -> QaSet:
    import datasets

    hub_id, config, split = HUB[dataset]
    try:
        rows = datasets.load_dataset(hub_id, config, split=split)
    except Exception as exc:  # network, auth, a missing split: reported the same way
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"cannot load {hub_id} ({split}): {reason} (or give --qa-data PATH)") from None
    name = f"hub:{hub_id}" + (f":{config}" if config else "") + f":{split}"
    return _build(dataset, name, _typed_rows(dataset, list(rows), name))


@functools.cache
def _from_files(dataset: str, path: str) -> QaSet:
    root = Path(path).expanduser()
    if not root.exists():
        raise CocaEvalError(f"QA data not found: {path}")
    files = (
        [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.suffix in (".json", ".jsonl"))
    )
    records: list = []
    for file in files:
        kind, rows = _read(file)
        if kind == dataset:
            records += _typed_rows(dataset, rows, str(file))
    if not records:
        raise CocaEvalError(f"no {TITLES[dataset]} questions in {path} (JSON or JSONL in its own format)")
    return _build(dataset, str(root), records)


def _read(file: Path) -> tuple[str, list]:
    """``(squad | hotpotqa | other, rows)``: SQuAD's own file (its articles, each one row), or rows of
    either format (HotpotQA's own file is a list of them; JSONL rows are the hub's)."""
    try:
        text = file.read_text(encoding="utf-8")
        data = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if file.suffix == ".jsonl"
            else None
        )
        data = json.loads(text) if data is None else data
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CocaEvalError(f"cannot read QA data {file}: {type(exc).__name__}") from None
    if isinstance(data, dict) and isinstance(data.get("data"), list):  # SQuAD's own file: articles
        return "squad", data["data"]
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "answers" in data[0]:  # SQuAD's field; HotpotQA's is "answer"
            return "squad", data
        if "answer" in data[0]:
            return "hotpotqa", data
    return "other", []


def _typed_rows(dataset: str, rows: list, source: str) -> list:
    """Every row read through its format's model, before any model loads: a malformed record is one
    line naming ``source``, the record and the field, and so is a question whose answers are all empty
    after normalisation (it would match any output: :mod:`coca_eval.references`). SQuAD: ``(title,
    paragraph, question, answers)`` in file order (unanswerable ones kept for now); HotpotQA:
    ``(question, [answer], paragraphs as "title\\nsentences")``."""
    from pydantic import ValidationError

    model = _SquadArticle if dataset == "squad" and rows and "paragraphs" in rows[0] else _ROW_MODELS[dataset]
    out: list = []
    for number, row in enumerate(rows):
        try:
            records = model.model_validate(row).records()
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise CocaEvalError(
                f"QA data {source}: record {number} is not {TITLES[dataset]}'s: {where}: {first['msg']}"
            ) from None
        for record in records:
            question, answers = (record[2], record[3]) if dataset == "squad" else record[:2]
            if answers or dataset != "squad":  # SQuAD's unanswerable questions have none (left out)
                check_references(answers, f"QA data {source}: record {number} (question {question!r})")
        out += records
    return out


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Answer(_Record):
    text: StrictStr


class _SquadQuestion(_Record):
    question: StrictStr
    answers: list[_Answer] = []
    is_impossible: StrictBool = False


class _SquadParagraph(_Record):
    context: StrictStr
    qas: list[_SquadQuestion]


class _SquadArticle(_Record):
    """An article of SQuAD's own dev file: its paragraphs, each with its questions."""

    title: StrictStr = ""
    paragraphs: list[_SquadParagraph]

    def records(self) -> list:
        return [
            (self.title, p.context, q.question, [] if q.is_impossible else [a.text for a in q.answers])
            for p in self.paragraphs
            for q in p.qas
        ]


class _HubAnswers(_Record):
    text: list[StrictStr]


class _SquadRow(_Record):
    """A row of the hub's ``squad_v2`` (an unanswerable question has an empty ``text`` list)."""

    title: StrictStr = ""
    context: StrictStr
    question: StrictStr
    answers: _HubAnswers

    def records(self) -> list:
        return [(self.title, self.context, self.question, list(self.answers.text))]


class _HubContext(_Record):
    title: list[StrictStr]
    sentences: list[list[StrictStr]]

    @model_validator(mode="after")
    def _paired(self) -> _HubContext:
        if len(self.title) != len(self.sentences):
            raise ValueError(f"{len(self.title)} titles for {len(self.sentences)} paragraphs")
        return self


class _HubFacts(_Record):
    title: list[StrictStr]
    sent_id: list[StrictInt]


class _HotpotRow(_Record):
    """A HotpotQA question: its own file's (paragraphs and facts as ``[title, ...]`` pairs) or the hub's
    (the same as dicts of lists)."""

    question: StrictStr
    answer: StrictStr
    context: list[tuple[StrictStr, list[StrictStr]]] | _HubContext
    supporting_facts: list[tuple[StrictStr, StrictInt]] | _HubFacts | None = None

    def records(self) -> list:
        context = self.context
        pairs = (
            zip(context.title, context.sentences, strict=True)
            if isinstance(context, _HubContext)
            else context
        )
        return [(self.question, [self.answer], [f"{t}\n{''.join(s)}" for t, s in pairs])]


_ROW_MODELS = {"squad": _SquadRow, "hotpotqa": _HotpotRow}


def _build(dataset: str, name: str, records: list) -> QaSet:
    if dataset == "squad":
        docs = sorted({paragraph for _, paragraph, _, _ in records})
        index = {d: i for i, d in enumerate(docs)}
        articles: dict[str, list[int]] = {}
        for title, paragraph, _, _ in records:
            if index[paragraph] not in articles.setdefault(title, []):
                articles[title].append(index[paragraph])
        questions = [
            Question(q, tuple(dict.fromkeys(a)), (index[p],), tuple(i for i in articles[t] if i != index[p]))
            for t, p, q, a in records
            if a
        ]
    else:
        docs = sorted({d for _, _, paragraphs in records for d in paragraphs})
        index = {d: i for i, d in enumerate(docs)}
        questions = [Question(q, tuple(a), tuple(index[p] for p in ps)) for q, a, ps in records]
    if not questions:
        raise CocaEvalError(f"no answerable {TITLES[dataset]} questions in {name}")
    return QaSet(f"{TITLES[dataset]} ({name})", tuple(docs), tuple(questions))
