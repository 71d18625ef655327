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

from coca_eval.errors import CocaEvalError

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
    records = _squad_rows(rows) if dataset == "squad" else _hotpot_rows(rows)
    return _build(dataset, f"hub:{hub_id}" + (f":{config}" if config else "") + f":{split}", records)


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
            records += _squad_rows(rows) if dataset == "squad" else _hotpot_rows(rows)
    if not records:
        raise CocaEvalError(f"no {TITLES[dataset]} questions in {path} (JSON or JSONL in its own format)")
    return _build(dataset, str(root), records)


def _read(file: Path) -> tuple[str, list[dict]]:
    """``(squad | hotpotqa | other, rows)``: the original files, or JSONL rows in the hub's formats."""
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
        rows = [
            {"title": a.get("title", ""), "context": p["context"], "question": q["question"], "answers": q}
            for a in data["data"]
            for p in a["paragraphs"]
            for q in p["qas"]
        ]
        return "squad", rows
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if isinstance(data[0].get("context"), str):
            return "squad", data
        if "context" in data[0] and "answer" in data[0]:
            return "hotpotqa", data
    return "other", []


def _answers(field) -> list[str]:
    """SQuAD answers: the file's ``qas`` entry (``answers`` list, ``is_impossible``) or the hub's dict."""
    if isinstance(field, dict) and "qas" not in field and "text" in field:
        return list(field["text"])  # hub row: {"text": [...], "answer_start": [...]}
    if field.get("is_impossible"):
        return []
    return [a["text"] for a in field.get("answers", [])]


def _squad_rows(rows) -> list[tuple[str, str, str, list[str]]]:
    """``(article title, paragraph, question, answers)`` in file order, unanswerable ones kept for now."""
    return [(r.get("title", ""), r["context"], r["question"], _answers(r["answers"])) for r in rows]


def _hotpot_rows(rows) -> list[tuple[str, list[str], list[str]]]:
    """``(question, [answer], paragraphs as "title\\nsentences")``; contexts as pairs or as the hub's dict."""
    out = []
    for r in rows:
        context = r["context"]
        pairs = (
            zip(context["title"], context["sentences"], strict=True) if isinstance(context, dict) else context
        )
        out.append((r["question"], [r["answer"]], [f"{t}\n{''.join(s)}" for t, s in pairs]))
    return out


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
