"""Question answering (qa_1: SQuAD v2, qa_2: HotpotQA): the gold documents among distractors.

As RULER: the question's gold documents, then its article's other paragraphs (SQuAD), then random
documents of the set, as many as fit; shuffled and written ``Document i:\\n...`` with blank lines
between. RULER counts documents by tokenising the prompt again and again; we tokenise each document and
each ``Document i:`` header once and add up, and fill the tokens left over with one more distractor
document cut to the token, so the prompt is exactly N. Questions are taken in an order fixed by the
seed, the same at every length (RULER takes them in file order); where a question's gold documents
alone do not fit, a random other one is drawn, and the sample records how many draws it took (RULER's
prompts would exceed the length instead).
"""

from __future__ import annotations

import random
from typing import Any

from coca_eval.generation.draws import Context, Draw, SampleKey
from coca_eval.generation.segments import TooShort
from coca_eval.ruler.qa_data import QaSet
from coca_eval.ruler.tasks import QA_DOCUMENT, RulerTask


def question_order(qa: QaSet, seed: int, task: str) -> list[int]:
    order = list(range(len(qa.questions)))
    random.Random(f"coca-eval-ruler-questions:{seed}:{task}").shuffle(order)
    return order


def draw_qa(task: RulerTask, rng: random.Random, kit: Any, key: SampleKey) -> Draw:
    """``kit``: RULER's prompt builder, whose QA sets the question comes from."""
    qa = kit.qa_set(task.dataset)
    order = question_order(qa, key.seed, task.name)
    position = key.index % len(order) if key.attempt == 0 else rng.randrange(len(order))
    question = qa.questions[order[position]]
    related = list(question.related)
    rng.shuffle(related)
    fill_rng = random.Random(rng.getrandbits(64))

    def header(position: int) -> list[int]:
        text = QA_DOCUMENT.format(i=position + 1, document="")
        return kit.pieces.piece(text if position == 0 else "\n\n" + text)

    bodies: dict[int, list[int]] = {}

    def body(doc: int) -> list[int]:
        if doc not in bodies:
            bodies[doc] = kit.pieces.fresh(qa.documents[doc])
        return bodies[doc]

    def fill(budget: int) -> Context:
        chosen = list(question.gold)
        costs = [len(body(d)) for d in chosen]
        used = sum(len(header(i)) for i in range(len(chosen))) + sum(costs)
        if used > budget:
            raise TooShort(used, f"the {len(chosen)} gold document(s)")
        candidates = _distractors(qa, question, related, fill_rng)
        while True:
            extra = next(candidates)
            more = len(header(len(chosen))) + len(body(extra))
            if used + more > budget:
                break
            chosen.append(extra)
            used += more
        fill_rng.shuffle(chosen)
        ids: list[int] = []
        starts = {}
        for position, doc in enumerate(chosen):
            starts[doc] = len(ids)
            ids += header(position) + body(doc)
        ids += (header(len(chosen)) + body(extra))[: budget - len(ids)]  # one more, cut to the token
        depths = [round(starts[g] / budget, 4) for g in question.gold]
        return Context(ids, 0, {"haystack": qa.name, "documents": len(chosen), "depths": depths})

    return Draw({"query": question.query}, question.answers, fill, redraw=True)


def _distractors(qa: QaSet, question, related: list[int], rng: random.Random):
    """The article's other paragraphs first, then random documents, none of them gold; when a small set
    runs out, its distractors again in a new order (RULER repeats its documents too)."""
    used = set(question.gold) | set(related)
    yield from related
    others = [i for i in range(len(qa.documents)) if i not in used]
    rng.shuffle(others)
    yield from others
    again = [i for i in range(len(qa.documents)) if i not in question.gold] or list(question.gold)
    while True:
        rng.shuffle(again)
        yield from again
