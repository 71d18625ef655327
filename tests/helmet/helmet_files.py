"""Small files in HELMET's RAG formats, written for the tests (standard library only, so the script that
runs HELMET's own loaders outside the project writes the very same files).

``write_data_dir(root)`` writes ``root/kilt/`` with NQ-style files (rows with an ``id``) at k = 50,
105, 220 and 440 passages per question and a demonstration file at k = 3 (one key repeated, to exercise
the drop of repeated keys), and PopQA-style files (no ``id``: rows keyed by their question, with
``s_pop``, some above HELMET's popularity threshold). Passages are made-up sentences of made-up words;
each question's gold passage names its answer and is marked ``has_answer``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SYLLABLES = ("ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "vu", "sha", "gen", "mor", "tel", "bi")
KS = (50, 105, 220, 440)
QUESTIONS = 8
DEMOS = 12


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))


def _sentence(rng: random.Random) -> str:
    words = [_word(rng) for _ in range(rng.randint(6, 14))]
    return " ".join(words).capitalize() + "."


def _passage(rng: random.Random, sentences: int) -> dict:
    title = " ".join(_word(rng) for _ in range(2)).title()
    return {"title": title, "text": " ".join(_sentence(rng) for _ in range(sentences)), "has_answer": False}


def _question(rng: random.Random, index: int, passages: int, sentences: int, with_id: bool) -> dict:
    place = _word(rng).title()
    answer = _word(rng).title() + " " + _word(rng).title()
    ctxs = [_passage(rng, sentences) for _ in range(passages)]
    gold = rng.randrange(min(passages, 40))  # within the first k of every file
    ctxs[gold] = {
        "title": place,
        "text": f"{_sentence(rng)} The keeper of {place} is {answer}. {_sentence(rng)}",
        "has_answer": True,
    }
    row = {"question": f"who is the keeper of {place}?", "answers": [answer, answer.lower()], "ctxs": ctxs}
    if with_id:
        row["id"] = f"q{index:03d}"
    return row


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def write_data_dir(root: Path, sentences: int = 5) -> Path:
    """The files under ``root/kilt``; returns ``root`` (what ``--data`` takes)."""
    rng = random.Random(2024)
    nq = [_question(rng, i, max(KS), sentences, with_id=True) for i in range(QUESTIONS)]
    for k in KS:
        _write(
            root / f"kilt/nq-dev-multikilt_1000_k{k}_dep6.jsonl", [{**r, "ctxs": r["ctxs"][:k]} for r in nq]
        )
    demos = [_question(rng, 100 + i, 3, 2, with_id=True) for i in range(DEMOS)]
    demos.append({**demos[3], "question": demos[3]["question"] + " (again)"})  # a repeated id
    _write(root / "kilt/nq-train-multikilt_1000_k3_dep6.jsonl", demos)
    popqa = [_question(rng, i, max(KS), sentences, with_id=False) for i in range(QUESTIONS + 4)]
    for i, row in enumerate(popqa):
        row["s_pop"] = [12, 240, 5000, 999, 31, 77000, 150, 8, 460, 1000, 62, 3][i]
    for k in KS:
        _write(root / f"kilt/popqa_test_1000_k{k}_dep6.jsonl", [{**r, "ctxs": r["ctxs"][:k]} for r in popqa])
    _write(root / "kilt/popqa_test_1000_k3_dep6.jsonl", [{**r, "ctxs": r["ctxs"][:3]} for r in popqa])
    return root


ICL_TASKS = {"icl_trec_coarse": ("coarse_label", 6, True), "icl_nlu": ("label", 68, False)}


def icl_rows(task: str, count: int, seed: int) -> list[dict]:
    """Made-up labelled texts for an ICL task (every label present, unevenly)."""
    field, labels, _ = ICL_TASKS[task]
    rng = random.Random(f"{task}:{seed}")
    rows = []
    for i in range(count):
        label = i % labels if i < 2 * labels else rng.randrange(labels)
        rows.append({"text": _sentence(rng)[:-1] + "?", field: label})
    return rows


def write_icl_dir(root: Path) -> Path:
    """``root/icl/<task>/train.jsonl`` (and ``test.jsonl`` where the set has a test split)."""
    for task, (_, _, has_test) in ICL_TASKS.items():
        _write(root / f"icl/{task}/train.jsonl", icl_rows(task, 400, 1))
        if has_test:
            _write(root / f"icl/{task}/test.jsonl", icl_rows(task, 40, 2))
    return root


RERANK_KS = (50, 130, 285, 600)


def _rerank_row(rng: random.Random, qid: str, passages: int, sentences: int) -> dict:
    ctxs = [
        {"id": str(rng.randrange(10**6)), "title": _word(rng).title(),
         "text": " ".join(_sentence(rng) for _ in range(sentences)), "label": 0}
        for _ in range(passages)
    ]  # fmt: skip
    for place, label in zip(rng.sample(range(min(passages, 10)), 3), (3, 2, 1), strict=True):
        ctxs[place]["label"] = label  # three relevant passages, within every file's first ten
    return {"qid": qid, "query": _sentence(rng)[:-1].lower() + "?", "ctxs": ctxs}


def write_rerank_dir(root: Path, sentences: int = 2) -> Path:
    """``root/msmarco/``: test files at HELMET's four k and the k = 10 demonstration file (some of whose
    queries are test queries, which each question's demonstrations must leave out)."""
    rng = random.Random(77)
    queries = [_rerank_row(rng, f"{1000 + i}", max(RERANK_KS), sentences) for i in range(8)]
    for k in RERANK_KS:
        _write(
            root / f"msmarco/test_reranking_data_k{k}_dep3.jsonl",
            [{**q, "ctxs": q["ctxs"][:k]} for q in queries],
        )
    demos = [_rerank_row(rng, f"{2000 + i}", 10, 1) for i in range(10)]
    demos += [{**q, "ctxs": q["ctxs"][:10]} for q in queries[:4]]
    _write(root / "msmarco/test_reranking_data_k10_dep3.jsonl", demos)
    return root


def _uuid(rng: random.Random) -> str:
    hexes = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"


def _kv_row(rng: random.Random, pairs: int) -> dict:
    kvs = [(_uuid(rng), _uuid(rng)) for _ in range(pairs)]
    context = "JSON data:\n{" + ",\n ".join(f'"{k}": "{v}"' for k, v in kvs) + "}"
    gold = rng.randrange(pairs)
    demos = [[f'"{k}"', v] for k, v in rng.sample(kvs, 3)]
    return {"context": context, "question": f'"{kvs[gold][0]}"', "answer": kvs[gold][1], "demos": demos,
            "num_kvs": pairs}  # fmt: skip


def _niah_row(rng: random.Random, sentences: int, values: int) -> dict:
    key = _word(rng) + "-" + _word(rng)
    numbers = [str(rng.randrange(10**6, 10**7)) for _ in range(values)]
    text = [_sentence(rng) for _ in range(sentences)]
    for number in numbers:
        text.insert(rng.randrange(len(text)), f"One of the special magic numbers for {key} is: {number}.")
    noun = "numbers" if values > 1 else "number"
    return {"context": " ".join(text), "query": key, "type_needle_v": noun, "outputs": numbers, "length": 0}


def write_recall_dir(root: Path) -> Path:
    """``root/json_kv/test_k{105,220}_dep6.jsonl`` and ``root/ruler/<task>/validation_{8192,16384}.jsonl``
    in the layouts HELMET's loaders read (RULER rows long enough that HELMET cuts them)."""
    rng = random.Random(5)
    for k in (105, 220):
        _write(root / f"json_kv/test_k{k}_dep6.jsonl", [_kv_row(rng, k) for _ in range(8)])
    for task, values in (("niah_multikey_2", 1), ("niah_multivalue", 4)):
        for length, sentences in ((8192, 400), (16384, 800)):
            rows = [_niah_row(rng, sentences, values) for _ in range(8)]
            _write(root / f"ruler/{task}/validation_{length}.jsonl", rows)
    return root
