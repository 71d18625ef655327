"""Write LongBench's smoke sets: coca_eval/longbench/smoke/data/<task>.jsonl (and <task>_e.jsonl for
LongBench-E's tasks), two rows per task in LongBench's published layout, for the ``longbench-quick``
preset and the family's tests; and coca_eval/longbench/smoke/v2/data.json, two questions per domain of
LongBench v2 in its published layout (``longbench-v2-quick``), each asking for a code word planted
early in its document (where every middle cut keeps it), with four code words to choose from.

A smoke set, not LongBench: its documents are passages of the project's embedded public-domain books
(Chinese ones a few sentences written here, repeated), each holding a planted fact the question asks
for; classification, counting, retrieval and code rows are made up in the same way. Its numbers mean
nothing about any model; they show that the command, the tables and the report run. Deterministic:

    python scripts/longbench_smoke_set.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from coca_eval.data.books import load_embedded_books
from coca_eval.longbench.averages import CHINESE_TASKS, LONGBENCH_E_TASKS, TASKS

SMOKE = Path(__file__).resolve().parents[1] / "coca_eval" / "longbench" / "smoke"
OUT = SMOKE / "data"
WORDS = (900, 2200)  # row 0 fits a 1k prompt untruncated in most tokenizers, row 1 is past 2k
ZH = "这是一个用于冒烟测试的段落，内容没有任何意义。城市的河边有一座古老的桥，人们每天从桥上走过。"
CODES = ("amber", "cobalt", "saffron", "juniper")
CLASSES = ("Location", "Person", "Number", "Description")


def book_words() -> list[str]:
    return " ".join(d.text for d in load_embedded_books()).split()


def passage(words: list[str], rng: random.Random, count: int, fact: str) -> str:
    start = rng.randrange(len(words) - count)
    chosen = words[start : start + count]
    middle = rng.randrange(count // 4, 3 * count // 4)
    return " ".join([*chosen[:middle], fact, *chosen[middle:]])


def chinese(count: int, fact: str) -> str:
    body = ZH * (count // len(ZH) + 1)
    return body[: count // 2] + fact + body[count // 2 : count]


def row(task: str, i: int, words: list[str], rng: random.Random) -> dict:
    n, code = WORDS[i], CODES[(len(task) + i) % len(CODES)]
    classes, answers, question = None, [code], "What is the keeper's code word?"
    context = passage(words, rng, n, f"The keeper's code word is {code}.")
    if task in CHINESE_TASKS:
        question, answers = "守门人的暗号是什么？", [f"暗号是{code}"]
        context = chinese(n, f"守门人的暗号是{code}。")
    if task in ("trec", "lsht"):
        classes = list(CLASSES)
        shots = [
            f"Question: {' '.join(rng.sample(words, 8))}\nType: {rng.choice(CLASSES)}" for _ in range(n // 10)
        ]
        context, question, answers = "\n".join(shots), "Question: Where is the keeper's house?", ["Location"]
    elif task in ("triviaqa", "samsum"):
        shots = [
            f"Passage: {' '.join(rng.sample(words, 20))}\nAnswer: {rng.choice(CODES)}" for _ in range(n // 22)
        ]
        context, question = "\n\n".join(shots), f"Passage: The keeper's code word is {code}.\nAnswer:"
    elif task.startswith("passage_"):
        paragraphs = [" ".join(words[k * 97 : k * 97 + n // 8]) for k in range(6)]
        paragraphs += paragraphs[:2]  # two duplicates: six unique paragraphs
        label = "段落" if task.endswith("zh") else "Paragraph "
        context = "\n\n".join(f"{label}{k + 1}: {p}" for k, p in enumerate(paragraphs))
        question = " ".join(paragraphs[2].split()[:30])
        answers = ["6"] if task == "passage_count" else [f"{label}3"]
    elif task in ("lcc", "repobench-p"):
        lines = [f"def step_{k}(value):\n    return value + {k}\n" for k in range(n // 6)]
        context, question, answers = "\n".join(lines), "def step_final(value):\n", ["    return value + 1"]
    length = len(context) if task in CHINESE_TASKS else len(context.split())
    return {
        "input": question, "context": context, "answers": answers, "length": length,
        "dataset": task, "language": "zh" if task in CHINESE_TASKS else "en",
        "all_classes": classes, "_id": f"smoke-{task}-{i}",
    }  # fmt: skip


V2_DOMAINS = (
    "Single-Document QA", "Multi-Document QA", "Long In-context Learning",
    "Long-dialogue History Understanding", "Code Repository Understanding",
    "Long Structured Data Understanding",
)  # fmt: skip
V2_WORDS = 2600  # past 2k tokens in most tokenizers, so exact lengths of 1k and 2k cut every document


def question(domain: str, i: int, words: list[str], rng: random.Random) -> dict:
    """A LongBench v2 row: a document of book text whose code word sits in its first 150 words."""
    codes = rng.sample(("amber", "cobalt", "saffron", "juniper", "umber", "teal"), 4)
    answer = rng.choice("ABCD")
    start = rng.randrange(len(words) - V2_WORDS)
    chosen = words[start : start + V2_WORDS]
    at = rng.randrange(40, 150)
    code = codes["ABCD".index(answer)]
    context = " ".join([*chosen[:at], f"The keeper's code word is {code}.", *chosen[at:]])
    number = V2_DOMAINS.index(domain) * 2 + i
    return {
        "_id": f"smoke-v2-{number}", "domain": domain, "sub_domain": "smoke",
        "difficulty": ("easy", "hard")[number % 2], "length": ("short", "medium", "long")[number % 3],
        "question": "What is the keeper's code word?",
        **{f"choice_{letter}": c for letter, c in zip("ABCD", codes, strict=True)},
        "answer": answer, "context": context,
    }  # fmt: skip


def write_v2(words: list[str]) -> None:
    rng = random.Random(622)
    rows = [question(domain, i, words, rng) for domain in V2_DOMAINS for i in range(2)]
    (SMOKE / "v2").mkdir(parents=True, exist_ok=True)
    (SMOKE / "v2" / "data.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", "utf-8")


def main() -> None:
    words, rng = book_words(), random.Random(62)
    write_v2(words)
    OUT.mkdir(parents=True, exist_ok=True)
    for task in TASKS:
        rows = [row(task, i, words, rng) for i in range(len(WORDS))]
        names = [f"{task}.jsonl"] + ([f"{task}_e.jsonl"] if task in LONGBENCH_E_TASKS else [])
        for name in names:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            (OUT / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
