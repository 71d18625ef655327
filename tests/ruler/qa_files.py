"""Small SQuAD v2 and HotpotQA files in the datasets' own formats, written by the tests (no hub)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tiny_models import WORDS

ANIMALS = ("otter", "heron", "badger", "lynx", "walrus", "ibis", "marten", "gecko", "tapir", "okapi", "stoat")


def _paragraph(rng: random.Random, answer: str) -> str:
    sentences = []
    for i in range(5):
        words = rng.choices(WORDS, k=rng.randint(6, 12))
        if i == 2:
            words.insert(3, answer)
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


def squad_json(seed: int = 0, articles: int = 5, paragraphs: int = 4) -> dict:
    """SQuAD's dev-file shape: articles of paragraphs, each with one answerable and one unanswerable
    question."""
    rng = random.Random(seed)
    data = []
    for a in range(articles):
        paras = []
        for p in range(paragraphs):
            answer = f"{ANIMALS[(a * paragraphs + p) % len(ANIMALS)]}{a}{p}"
            qas = [
                {
                    "id": f"{a}-{p}",
                    "question": f"Which animal is article {a} paragraph {p} about?",
                    "answers": [
                        {"text": answer, "answer_start": 0},
                        {"text": answer.upper(), "answer_start": 0},
                    ],
                    "is_impossible": False,
                },
                {
                    "id": f"{a}-{p}-x",
                    "question": "What is never said?",
                    "answers": [],
                    "plausible_answers": [{"text": "nothing", "answer_start": 0}],
                    "is_impossible": True,
                },
            ]
            paras.append({"context": _paragraph(rng, answer), "qas": qas})
        data.append({"title": f"Article_{a}", "paragraphs": paras})
    return {"version": "v2.0", "data": data}


def hotpot_json(seed: int = 1, questions: int = 10, paragraphs: int = 4) -> list[dict]:
    """HotpotQA's distractor dev-file shape: each question with its titled paragraphs as sentence lists."""
    rng = random.Random(seed)
    rows = []
    for q in range(questions):
        answer = f"{ANIMALS[q % len(ANIMALS)]}-{q}"
        context = []
        for p in range(paragraphs):
            text = _paragraph(rng, answer if p == 0 else f"{ANIMALS[(q + p) % len(ANIMALS)]}x{q}{p}")
            context.append([f"Title {q}.{p}", [s + " " for s in text.split(". ")]])
        rows.append(
            {
                "_id": str(q),
                "question": f"Which animal does question {q} name?",
                "answer": answer,
                "type": "bridge",
                "level": "easy",
                "supporting_facts": [],
                "context": context,
            }
        )
    return rows


def squad_hub_rows(data: dict) -> list[dict]:
    """The hub's squad_v2 rows for the same file (unanswerable: empty answer lists)."""
    return [
        {
            "id": q["id"],
            "title": a["title"],
            "context": p["context"],
            "question": q["question"],
            "answers": {"text": [x["text"] for x in q["answers"]], "answer_start": [0] * len(q["answers"])},
        }
        for a in data["data"]
        for p in a["paragraphs"]
        for q in p["qas"]
    ]


def hotpot_hub_rows(rows: list[dict]) -> list[dict]:
    """The hub's hotpot_qa rows: context as ``{"title": [...], "sentences": [[...]]}``."""
    return [
        {
            **{k: v for k, v in r.items() if k != "context"},
            "context": {"title": [t for t, _ in r["context"]], "sentences": [s for _, s in r["context"]]},
        }
        for r in rows
    ]


def write_qa_dir(folder: Path) -> Path:
    """Both original files in one directory, as ``--qa-data DIR`` reads them."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dev-v2.0.json").write_text(json.dumps(squad_json()), encoding="utf-8")
    (folder / "hotpot_dev_distractor_v1.json").write_text(json.dumps(hotpot_json()), encoding="utf-8")
    return folder
