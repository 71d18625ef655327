"""Google DeepMind's MRCR v2 (``--source deepmind``), as its ``eval_hub/mrcr_v2`` code (commit
67b7fd2) defines it: CSV files that its ``download.sh`` fetches from Google Cloud Storage, named
``mrcr_v2p1_<k>needle_<bin>_dynamic_fewshot_text_style_fast.csv`` with ``<bin>`` one of ``in_(4096,
8192)`` .. ``in_(4194304,8388608)`` or the cumulative ``upto_128K``, each row a ``queries`` text (the
whole conversation, few-shot examples first, as ``User:`` / ``Assistant:`` paragraphs) and an
``answer`` (a 12-character random string, then the wanted response). DeepMind sends ``queries`` as
the one user turn of a chat; so does this source.

Its metric, as ``run_evaluation.py`` computes it: the prediction and the answer stripped of
surrounding whitespace; the answer's first 12 characters are the random string, the rest (stripped)
the reference; a prediction that does not hold the string anywhere scores 0, else the text after its
*last* occurrence (stripped) is compared with the reference by ``SequenceMatcher(a=reference,
b=prediction).ratio()`` (the order matters: the automatic junk heuristic reads the second text).
This is more lenient than OpenAI's card: text before the string and spaces around it cost nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from pathlib import Path

from coca_eval.errors import CocaEvalError

HASH_CHARS = 12
GRADING = "mrcr_v2"
NAME = re.compile(r"mrcr_v2p1_(\d+)needle_(.+?)_dynamic_fewshot_text_style_fast\.csv$")
BIN = re.compile(r"in_\((\d+),(\d+)\)")


def v2_score(prediction: str, answer: str) -> float:
    """MRCR v2's metric of ``prediction`` against ``answer`` (random string, then the response)."""
    if not isinstance(prediction, str) or not prediction:
        return 0.0
    answer = answer.strip()
    if len(answer) < HASH_CHARS:
        return 0.0
    key, reference = answer[:HASH_CHARS], answer[HASH_CHARS:].strip()
    prediction = prediction.strip()
    at = prediction.rfind(key)
    if at < 0:
        return 0.0
    return SequenceMatcher(a=reference, b=prediction[at + HASH_CHARS :].strip()).ratio()


@dataclass(frozen=True)
class V2Row:
    messages: tuple[dict, ...]  # the queries text as the one user turn
    answer: str
    needles: int
    upper: int | None  # the file's bin's upper end (None for a cumulative "upto" file)
    where: str
    wanted_message = None  # the wanted turn lies inside the one text: no depth is known

    @property
    def key(self) -> str:
        return self.messages[0]["content"]

    def detail(self) -> dict:
        return {"row": self.where, "grading": GRADING, "prefix": self.answer.strip()[:HASH_CHARS],
                "deepmind_bin": self.upper}  # fmt: skip


def _file_needles(path: Path) -> tuple[int, int | None]:
    found = NAME.search(path.name)
    if found is None:
        pattern = "mrcr_v2p1_<k>needle_<bin>_dynamic_fewshot_text_style_fast.csv"
        raise CocaEvalError(f"{path}: not an MRCR v2 file name ({pattern})")
    window = BIN.fullmatch(found[2])
    return int(found[1]), int(window[2]) if window else None


def _file_rows(path: Path) -> list[V2Row]:
    import pandas as pd

    needles, upper = _file_needles(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"{path}: not a readable CSV file ({type(exc).__name__})") from None
    missing = [c for c in ("queries", "answer") if c not in table.columns]
    if missing:
        raise CocaEvalError(f"{path}: missing column {missing[0]}")
    rows = []
    for i, (queries, answer) in enumerate(zip(table["queries"], table["answer"], strict=True)):
        where = f"{path} row {i}"
        if not queries.strip():
            raise CocaEvalError(f"{where}: queries: empty")
        if len(answer.strip()) <= HASH_CHARS or not answer.strip()[HASH_CHARS:].strip():
            raise CocaEvalError(f"{where}: answer: nothing after the {HASH_CHARS}-character random string")
        rows.append(V2Row(({"role": "user", "content": queries},), answer, needles, upper, where))
    return rows


@cache
def v2_rows(data: str, needles: tuple[int, ...]) -> tuple[V2Row, ...]:
    """Every row of the MRCR v2 CSV files under ``data`` with one of ``needles``, checked."""
    from coca_eval.data.published_rows import refuse_repeats

    root = Path(data).expanduser()
    files = [root] if root.is_file() else sorted(root.glob("mrcr_v2p1_*.csv"))
    if not files:
        raise CocaEvalError(
            f"--data {data}: no mrcr_v2p1_*.csv files (fetch them with eval_hub's mrcr_v2/download.sh)"
        )
    rows = [row for path in files if _file_needles(path)[0] in needles for row in _file_rows(path)]
    return refuse_repeats(rows, lambda r: r.key, "conversation")
