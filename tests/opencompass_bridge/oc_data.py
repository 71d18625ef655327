"""A tiny data root in OpenCompass's upstream layout: COPA, RTE, BoolQ and one MMLU subject.

Field names and value spellings follow what OpenCompass 0.5.4's loaders read (BoolQ's label is the
string ``"true"``/``"false"``; MMLU CSVs have no header: question, A, B, C, D, answer).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

SIZES = {"COPA": 6, "RTE": 6, "BoolQ": 6, "MMLU": 4}


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _csv(path: Path, rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def write_data_root(root: Path) -> Path:
    data = Path(root) / "data"
    copa = [
        {"premise": f"The man saw a dog {i}.", "choice1": "He ran.", "choice2": "He sat.",
         "question": "effect" if i % 2 else "cause", "label": i % 2, "idx": i}
        for i in range(SIZES["COPA"])
    ]  # fmt: skip
    _jsonl(data / "SuperGLUE" / "COPA" / "val.jsonl", copa)
    rte = [
        {"premise": f"The sky was blue on day {i}.", "hypothesis": "The sky was blue.",
         "label": "entailment" if i % 2 else "not_entailment", "idx": i}
        for i in range(SIZES["RTE"])
    ]  # fmt: skip
    _jsonl(data / "SuperGLUE" / "RTE" / "val.jsonl", rte)
    boolq = [
        {"question": f"is the number {i} even", "passage": f"The number {i} is a number.",
         "label": "true" if i % 2 == 0 else "false", "idx": i}
        for i in range(SIZES["BoolQ"])
    ]  # fmt: skip
    _jsonl(data / "SuperGLUE" / "BoolQ" / "val.jsonl", boolq)
    question = lambda i: [f"What is {i} plus {i}?", str(2 * i), str(i), str(i + 1), "0", "A"]  # noqa: E731
    _csv(data / "mmlu" / "dev" / "anatomy_dev.csv", [question(i) for i in range(5)])
    _csv(data / "mmlu" / "test" / "anatomy_test.csv", [question(i) for i in range(10, 10 + SIZES["MMLU"])])
    return Path(root)
