"""LongBench v2's answer letter and its accuracy table (THUDM/LongBench at 2e00731: ``pred.py``'s
``extract_answer`` and ``result.py``). Written here from those definitions; ``tests/longbench`` holds
them to the letters and tables LongBench's own code gave on a frozen set of responses.

* The letter: the answer is stripped and its ``*`` removed (markdown bold around the verdict), then the
  first ``The correct answer is (X)`` gives X, else the first ``The correct answer is X``, X one of A-D,
  case and spacing as written. Anything else has no letter and is wrong. The second form reads a word's
  first letter (``... is Both`` gives B), as LongBench's does.
* The table: accuracy overall, by difficulty (``easy``, anything else counts as hard) and by length
  class (``short``, ``medium``, anything else counts as long), in percent to one place. With
  ``compensated`` an answer with no letter counts a quarter, the chance of a guess (``result.py``'s
  switch, off in its published table).

LongBench's ``pred.py`` drops a question whose model output is empty (``''``, a failed API call) from
its results, so it is out of the denominator; what to do with such answers is the caller's choice here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_VERDICTS = (re.compile(r"The correct answer is \(([A-D])\)"), re.compile(r"The correct answer is ([A-D])"))
COLUMNS = ("Overall", "Easy", "Hard", "Short", "Medium", "Long")


def extract_choice(response: str) -> str | None:
    """The letter the response settles on, or None when it states none in LongBench's forms."""
    text = response.strip().replace("*", "")
    for verdict in _VERDICTS:
        found = verdict.search(text)
        if found:
            return found.group(1)
    return None


def is_correct(response: str, answer: str) -> bool:
    return extract_choice(response) == answer


def _credit(row: Mapping, compensated: bool) -> float:
    if compensated and row["pred"] is None:
        return 0.25
    return float(int(row["judge"]))


def _groups(row: Mapping) -> tuple[str, str, str]:
    difficulty = "Easy" if row["difficulty"] == "easy" else "Hard"
    length = {"short": "Short", "medium": "Medium"}.get(row["length"], "Long")
    return "Overall", difficulty, length


def accuracy_table(rows: Sequence[Mapping], compensated: bool = False) -> dict[str, float | None]:
    """``result.py``'s row for one result file: rows carry ``pred`` (the letter or None), ``judge``,
    ``difficulty`` and ``length``. A class with no question is None (``result.py`` stops there)."""
    credit = dict.fromkeys(COLUMNS, 0.0)
    counts = dict.fromkeys(COLUMNS, 0)
    for row in rows:
        for column in _groups(row):
            credit[column] += _credit(row, compensated)
            counts[column] += 1
    return {c: round(100 * credit[c] / counts[c], 1) if counts[c] else None for c in COLUMNS}


def judged_row(response: str, question: Mapping) -> dict:
    """A result row as ``pred.py`` writes it: the question's ``difficulty`` and ``length``, the letter
    extracted from the response and whether it is the answer."""
    letter = extract_choice(response)
    return {
        "difficulty": question["difficulty"],
        "length": question["length"],
        "answer": question["answer"],
        "pred": letter,
        "judge": letter == question["answer"],
    }


def score_choice(task, output: str, answers: Sequence[str], record: dict | None = None) -> dict:
    """One sample's record: ``score`` 1 for the right letter, else 0, and the ``choice`` read."""
    letter = extract_choice(output)
    return {"score": float(letter == answers[0]), "choice": letter}
