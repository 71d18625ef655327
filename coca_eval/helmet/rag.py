"""HELMET's RAG tasks (``kilt_nq``, ``kilt_triviaqa``, ``kilt_hotpotqa``, ``kilt_popqa_3``): a question
answered from retrieved passages, after two worked examples.

Which questions, which demonstrations and how they are written are HELMET's (``load_qa`` in its
``data.py`` at 4526dfb), so both protocols ask HELMET's questions with HELMET's demonstrations:

* the questions: the generator seeded with ``--seed`` samples ``--samples`` keys (the row's ``id``,
  else its question) from the sorted distinct keys, and the rows holding them are taken in file order;
  PopQA keeps only rows whose subject popularity is below 10^3 (HELMET's threshold 3, in log10);
* the demonstrations of a question: the demonstration file shuffled by a seed from the question's key
  (sha256, as ``datasets``' ``shuffle`` with numpy's generator), repeated keys dropped, the first two
  (PopQA leaves the question itself out first); each is its passages, its question and its first
  answer;
* passages read ``Document (Title: ...): ...``, joined by blank lines.

Exact protocol: the demonstrations and the gold passages (those the file marks ``has_answer``, else
those holding an answer after normalisation) are whole; the gold passages go in at depths drawn per
sample, the other passages follow in the retriever's order while they fit, the last cut to the token.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from functools import cache

from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort, insert, take
from coca_eval.helmet.data import ChosenRows, QaRow, data_file, read_rows
from coca_eval.helmet.scoring import normalize

INSTRUCTION = (
    "Use the given documents to write a concise and short answer to the question. Write your answer in "
    "the following format:\nAnswer: [answer]"
)
TEMPLATE = INSTRUCTION + "\n\n{demos}{context}\n\nQuestion: {question}"
ANSWER_PREFIX = "Answer:"
PASSAGE = "Document (Title: {title}): {text}"
DEMO = "{documents}\n\nQuestion: {question}\nAnswer: {answer}"
POPULARITY_BELOW = 3.0  # kilt_popqa_3: log10 of the subject's popularity below 3

# HELMET's files per task: test files by k (passages per question), and the demonstration file
FILES = {
    "kilt_nq": ("kilt/nq-dev-multikilt_1000_k{k}_dep6.jsonl", "kilt/nq-train-multikilt_1000_k3_dep6.jsonl"),
    "kilt_triviaqa": (
        "kilt/triviaqa-dev-multikilt_1000_k{k}_dep6.jsonl",
        "kilt/triviaqa-train-multikilt_1000_k3_dep6.jsonl",
    ),
    "kilt_hotpotqa": (
        "kilt/hotpotqa-dev-multikilt_1000_k{k}_dep3.jsonl",
        "kilt/hotpotqa-train-multikilt_1000_k3_dep3.jsonl",
    ),
    "kilt_popqa_3": ("kilt/popqa_test_1000_k{k}_dep6.jsonl", "kilt/popqa_test_1000_k3_dep6.jsonl"),
}


def passages_text(passages) -> str:
    return "\n\n".join(PASSAGE.format(title=p.title, text=p.text) for p in passages)


def row_key(row: QaRow, by_id: bool) -> str | int:
    return row.id if by_id else row.question


@dataclass(frozen=True)
class QaSet(ChosenRows):
    """One task's chosen questions (``rows``: HELMET's choice for ``seed`` and ``samples``) and demo
    rows."""

    demos: tuple[QaRow, ...]
    by_id: bool
    shots: int

    def demos_text(self, row: QaRow) -> str:
        """HELMET's demonstrations for ``row``, blank-line separated, a blank line after the last."""
        chosen = choose_demos(
            self.demos, row, self.by_id, self.shots, leave_out_self=self.task == "kilt_popqa_3"
        )
        if not chosen:
            return ""
        texts = [
            DEMO.format(documents=passages_text(d.ctxs), question=d.question, answer=d.answers[0])
            for d in chosen
        ]
        return "\n\n".join(texts) + "\n\n"


def choose_demos(demos, row: QaRow, by_id: bool, shots: int, leave_out_self: bool) -> list[QaRow]:
    """HELMET's demonstrations: the pool shuffled by the question key's sha256 seed, first occurrence of
    each key kept, the first ``shots``."""
    import numpy as np

    key = row_key(row, by_id)
    pool = [d for d in demos if row_key(d, by_id) != key] if leave_out_self else list(demos)
    seed = int(hashlib.sha256(str(key).encode("utf-8")).hexdigest(), 16) % 2**31
    order = np.random.default_rng(seed).permutation(len(pool))
    chosen, seen = [], set()
    for i in order:
        demo = pool[int(i)]
        if row_key(demo, by_id) in seen:
            continue
        seen.add(row_key(demo, by_id))
        chosen.append(demo)
        if len(chosen) == shots:
            break
    return chosen


def choose_rows(rows, samples: int, seed: int, by_id: bool) -> tuple[QaRow, ...]:
    """HELMET's questions: ``samples`` keys sampled from the sorted distinct keys by a generator seeded
    with ``seed``, their rows in file order."""
    keys = sorted({row_key(r, by_id) for r in rows})
    picked = set(random.Random(seed).sample(keys, min(samples, len(keys))))
    return tuple(r for r in rows if row_key(r, by_id) in picked)


def popular_enough(rows, task: str):
    """PopQA's rows whose subject popularity is under HELMET's threshold (every row for other tasks)."""
    if task != "kilt_popqa_3":
        return rows
    missing = [r for r in rows if r.s_pop is None or r.s_pop <= 0]
    if missing:
        raise CocaEvalError(f"{task}: a row has no positive s_pop (subject popularity) to filter on")
    return tuple(r for r in rows if math.log10(r.s_pop) < POPULARITY_BELOW)


@cache
def load_qa_set(task: str, data: str | None, k: int, samples: int, seed: int, shots: int) -> QaSet:
    """The task's HELMET file with ``k`` passages per question, its questions and demonstrations."""
    test, demo = FILES[task]
    rows = popular_enough(read_rows(str(data_file(task, test.format(k=k), data)), QaRow), task)
    demos = popular_enough(read_rows(str(data_file(task, demo, data)), QaRow), task)
    by_id = all(r.id is not None for r in rows)
    chosen = choose_rows(rows, samples, seed, by_id)
    return QaSet(task, chosen, demos, by_id, shots)


def fields(qa: QaSet, index: int) -> tuple[QaRow, dict[str, str]]:
    """Question ``index``'s row and the template's fields other than the context."""
    row = qa.row(index)
    return row, {"demos": qa.demos_text(row), "question": row.question}


def is_gold(passage, answers) -> bool:
    """A passage marked ``has_answer``, or (unmarked) one holding an answer after normalisation."""
    if passage.has_answer is not None:
        return passage.has_answer
    text = normalize(passage.text)
    return any(normalize(a) and normalize(a) in text for a in answers)


def answerless(row: QaRow) -> bool:
    """Whether no passage of ``row`` holds an answer: every passage is empty, or none is gold. Such a
    question is answered only from what the model knows, whatever its context length; HELMET keeps
    them (its retriever missed), so a run says how many it holds rather than refusing them."""
    return not any(p.text.strip() and is_gold(p, row.answers) for p in row.ctxs)


def draw_rag(task, rng: random.Random, kit: Kit, key: SampleKey, data: QaSet) -> Draw:
    """Exact protocol: the gold passages at depths drawn here, the rest in the retriever's order."""
    row, texts = fields(data, key.index)
    gold = [p for p in row.ctxs if is_gold(p, row.answers)]
    others = [p for p in row.ctxs if not is_gold(p, row.answers)]
    depths = [rng.random() for _ in gold]

    def fill(budget: int) -> Context:
        placed = [kit.pieces.fresh("\n\n" + passages_text([p])) for p in gold]
        used = sum(map(len, placed))
        if budget - used < 1:
            raise TooShort(used + 1, f"{len(gold)} gold passage(s) and one token")
        pieces = (kit.pieces.fresh(("\n\n" if i else "") + passages_text([p])) for i, p in enumerate(others))
        stream = take(_or_short(pieces, budget - used), budget - used)
        ids, starts = insert(stream, list(zip(depths, placed, strict=True)))
        detail = {
            "depths": [round(s / budget, 4) for s in starts],
            "passages": len(stream.bounds) - 1 + len(gold),
        }
        return Context(ids, 0, detail)

    return Draw(texts, tuple(row.answers), fill, prefix_shared=False)


def _or_short(pieces, budget: int):
    """The passages, then a TooShort saying the question's passages do not fill ``budget``."""
    total = 0
    for piece in pieces:
        total += len(piece)
        yield piece
    raise TooShort(budget - total, "the question's passages in the file are too few for this length")
