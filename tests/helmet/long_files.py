"""Small files in the layouts HELMET's long-QA and summarisation sets are published in, written for the
tests (standard library only, so the script that runs HELMET's own loaders outside the project writes the
very same files).

``write_long_dir(root)`` writes ``narrativeqa/{test,train}.jsonl`` (the hub set's nested rows),
``infbench/longbook_{qa,choice,sum}_eng.jsonl`` (InfiniteBench's rows) with the summaries' key points, and
``multi_lexsum/multi_lexsum_val.jsonl`` (HELMET's validation rows, one without a short summary) with
``train.jsonl``. Stories and documents are made-up sentences of made-up words.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SYLLABLES = ("ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "vu", "sha", "gen", "mor", "tel", "bi")
ROWS = 7


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))


def _sentence(rng: random.Random, words: tuple[int, int] = (6, 14)) -> str:
    return " ".join(_word(rng) for _ in range(rng.randint(*words))).capitalize() + "."


def _text(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences))


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _narrative(rng: random.Random, sentences: int) -> dict:
    answers = [_sentence(rng, (1, 3)) for _ in range(2)]
    return {
        "document": {"id": _word(rng), "kind": "gutenberg", "text": _text(rng, sentences)},
        "question": {"text": _sentence(rng)[:-1] + "?", "tokens": []},
        "answers": [{"text": a, "tokens": []} for a in answers],
    }


def _infbench(rng: random.Random, index: int, kind: str, sentences: int) -> dict:
    row = {"id": index, "context": _text(rng, sentences), "input": "", "answer": [], "options": []}
    if kind == "qa":
        row.update(input=_sentence(rng)[:-1] + "?", answer=[_sentence(rng, (1, 4))])
    elif kind == "choice":
        options = [_sentence(rng, (1, 3)) for _ in range(4)]
        row.update(input=_sentence(rng)[:-1] + "?", options=options, answer=[rng.choice(options)])
    else:
        row["answer"] = ["  " + _text(rng, 6) + "\n"]
    return row


def _lexsum(rng: random.Random, index: int, sentences: int) -> dict:
    return {
        "id": f"case-{index}",
        "sources": [_text(rng, sentences) for _ in range(rng.randint(1, 3))],
        "summary/long": _text(rng, 8),
        "summary/short": None if index == 3 else _text(rng, 3),
        "summary/tiny": _sentence(rng),
        "summary/short_keypoints": [_sentence(rng) for _ in range(rng.randint(2, 5))],
    }


def write_long_dir(root: Path, sentences: int = 40) -> Path:
    """The five sets' files under ``root`` (returned), ``sentences`` per story or document."""
    rng = random.Random(60)
    _write(root / "narrativeqa" / "test.jsonl", [_narrative(rng, sentences) for _ in range(ROWS)])
    _write(root / "narrativeqa" / "train.jsonl", [_narrative(rng, 3) for _ in range(ROWS)])
    for kind in ("qa", "choice", "sum"):
        rows = [_infbench(rng, 10 + i, kind, sentences) for i in range(ROWS)]
        _write(root / "infbench" / f"longbook_{kind}_eng.jsonl", rows)
    points = [{"id": 10 + i, "keypoints": [_sentence(rng) for _ in range(3)]} for i in range(ROWS)]
    _write(root / "infbench" / "longbook_sum_eng_keypoints.jsonl", points)
    _write(
        root / "multi_lexsum" / "multi_lexsum_val.jsonl", [_lexsum(rng, i, sentences) for i in range(ROWS)]
    )
    _write(root / "multi_lexsum" / "train.jsonl", [_lexsum(rng, 100 + i, 3) for i in range(ROWS)])
    return root
