"""HELMET's long-QA (``narrativeqa``, ``infbench_qa``, ``infbench_choice``) and summarisation
(``infbench_sum``, ``multi_lexsum``) tasks: one long document, a question or a request for a summary.

The templates, demonstrations and the choice of questions are HELMET's (``load_narrativeqa``,
``load_infbench``, ``load_multi_lexsum`` in its ``data.py`` at 4526dfb):

* InfiniteBench: the questions are the file shuffled with ``--seed`` (``datasets``' ``shuffle``, numpy's
  generator), the first ``--samples``; each question's two demonstrations are the other rows of the file
  shuffled with the seed, the first two, each shown as ``[story text]`` with its question (and options)
  and first answer, or its summary. The choice set's options read ``A. ...`` to ``D. ...`` and its
  references are the letter and ``letter. option``.
* NarrativeQA: the test split shuffled with the seed, the first ``--samples``; Multi-LexSum: the
  validation rows with a short summary, shuffled with the seed where they are more than ``--samples``.
  HELMET draws these two sets' demonstrations from their training split with an unseeded shuffle; here
  each question's two are drawn from it by a generator seeded with ``--seed`` and the question's index.

The document is the context: under ``--protocol helmet`` cut as HELMET's ``tokenize()`` cuts it, under
``exact`` its first tokens fill N exactly (a document shorter than that is an error).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort
from coca_eval.helmet import long_data as ld

ANSWER, SUMMARY = "Answer:", "Summary:"
NARRATIVEQA = (
    "You are given a story, which can be either a novel or a movie script, and a question. Answer the "
    "question as concisely as you can, using a single phrase if possible.\n\n{demo}{context}\n\nQuestion: "
    "{question}"
)
INFBENCH_QA = (
    "You are given a story and a question. Answer the question as concisely as you can, using a single "
    "phrase if possible.\n\n{demo}{context}\n\nQuestion: {question}"
)
INFBENCH_CHOICE = (
    "You are given a story and a question with multiple choices. Choose the best answer from the options "
    "provided. Only one of the following options is correct, output the answer using one single letter "
    "(A, B, C, or D). Don't say anything else.\n\n{demo}{context}\n\nQuestion: {question}\nOptions:\n"
    "{options}"
)
INFBENCH_SUM = (
    "You are given a book and you are tasked to summarize it. Write a summary of about 1000 to 1200 words. "
    "Only write about the plot and characters of the story. Do not discuss the themes or background of the "
    "book. Do not provide any analysis or commentary.\n\n{demo}{context}\n\nNow summarize the book."
)
LEXSUM = (
    "You are given the legal documents in a civil rights lawsuit, and you are tasked to summarize the case. "
    "Write a concise summary of one paragraph (200 to 250 words). The summary should contain a short "
    "description of the background, the parties involved, and the outcomes of the case.\n\n{demo}Legal "
    "documents:\n{context}\n\nNow please summarize the case."
)
# Each task's user template and what follows it without a chat template: HELMET's prompt_template joins
# the answer prefix with one newline (NarrativeQA) or two (InfiniteBench, Multi-LexSum).
LAYOUTS = {
    "narrativeqa": (NARRATIVEQA, ANSWER),
    "infbench_qa": (INFBENCH_QA, "\n" + ANSWER),
    "infbench_choice": (INFBENCH_CHOICE, "\n" + ANSWER),
    "infbench_sum": (INFBENCH_SUM, "\n" + SUMMARY),
    "multi_lexsum": (LEXSUM, "\n" + SUMMARY),
}
PARSE_PREFIX = {"multi_lexsum": SUMMARY}  # the prefix HELMET parses an answer after (else ``Answer:``)


@dataclass(frozen=True)
class LongItem:
    """One question as HELMET's template takes it: its fields (context included) and references;
    ``judge`` what HELMET's judge reads of it besides the output (recorded with a judged task's sample:
    :func:`coca_eval.helmet.judge_prompts.judge_sample`)."""

    fields: dict[str, str]
    answers: tuple[str, ...]
    judge: dict = field(default_factory=dict)


@dataclass(frozen=True)
class LongSet:
    task: str
    items: tuple[LongItem, ...]

    def item(self, index: int) -> LongItem:
        if index >= len(self.items):
            raise CocaEvalError(
                f"{self.task}: its file holds {len(self.items)} questions; ask for fewer --samples"
            )
        return self.items[index]


def permuted(rows: tuple, seed: int) -> list:
    """``rows`` in the order ``datasets``' ``shuffle(seed=seed)`` gives them (numpy's generator)."""
    import numpy as np

    return [rows[int(i)] for i in np.random.default_rng(seed).permutation(len(rows))]


def options_text(options: list[str]) -> str:
    return "A. {}\nB. {}\nC. {}\nD. {}".format(*options)


def infbench_answers(task: str, row: ld.InfRow) -> tuple[str, ...]:
    """The references: the choice set's letter and ``letter. option``, else the file's answers."""
    if task != "infbench_choice":
        return tuple(row.answer)
    letter = chr(ord("A") + row.options.index(row.answer[0]))
    return letter, f"{letter}. {row.answer[0]}"


def infbench_demo(task: str, demos: list[ld.InfRow]) -> str:
    if task == "infbench_sum":
        shown = [f"[story text]\nSummary: {d.answer[0].strip()}" for d in demos]
    else:
        shown = []
        for d in demos:
            options = f"\nOptions:\n{options_text(d.options)}" if task == "infbench_choice" else ""
            answer = infbench_answers(task, d)[0]
            shown.append(f"[story text]\nQuestion: {d.input}{options}\nAnswer: {answer}")
    return "For example:\n\n" + "\n\n".join(shown) + "\n\nNow, read the following story:\n\n"


def infbench_set(task: str, data: str | None, samples: int, seed: int, shots: int) -> LongSet:
    rows = ld.read(task, ld.INFBENCH_FILES[task], data, ld.InfRow)
    items = []
    for row in permuted(rows, seed)[:samples]:
        others = tuple(r for r in rows if r.id != row.id)
        demo = infbench_demo(task, permuted(others, seed)[:shots]) if shots else ""
        fields = {"demo": demo, "context": row.context, "question": row.input}
        if task == "infbench_choice":
            fields["options"] = options_text(row.options)
        judge = {"id": row.id, "expert_summary": row.answer[0]} if task == "infbench_sum" else {}
        items.append(LongItem(fields, infbench_answers(task, row), judge))
    return LongSet(task, tuple(items))


def drawn(pool: tuple, seed: int, index: int, shots: int) -> list:
    """``shots`` rows of a training split for question ``index`` (HELMET's draw is unseeded)."""
    return random.Random(f"{seed}:{index}").sample(pool, min(shots, len(pool))) if shots else []


def narrativeqa_set(data: str | None, samples: int, seed: int, shots: int) -> LongSet:
    test, train = ld.NARRATIVEQA_FILES
    rows = ld.read("narrativeqa", test, data, ld.NarrativeRow)
    pool = ld.read("narrativeqa", train, data, ld.NarrativeRow) if shots else ()
    items = []
    for index, row in enumerate(permuted(rows, seed)[:samples]):
        shown = [
            f"Question: {d.question.text}\nAnswer: {d.answers[0].text}"
            for d in drawn(pool, seed, index, shots)
        ]
        demo = ""
        if shots:
            demo = "For example:\n\n" + "\n\n".join(shown)
            demo += "\n\nNow, use the following story to answer the question:\n\n"
        fields = {"demo": demo, "context": row.document.text, "question": row.question.text}
        items.append(LongItem(fields, tuple(a.text for a in row.answers), {"question": row.question.text}))
    return LongSet("narrativeqa", tuple(items))


def lexsum_set(data: str | None, samples: int, seed: int, shots: int) -> LongSet:
    val, train = ld.LEXSUM_FILES
    rows = tuple(r for r in ld.read("multi_lexsum", val, data, ld.LexsumRow) if r.short is not None)
    pool = (
        tuple(r for r in ld.read("multi_lexsum", train, data, ld.LexsumRow) if r.short is not None)
        if shots
        else ()
    )
    chosen = permuted(rows, seed)[:samples] if len(rows) > samples else list(rows)
    items = []
    for index, row in enumerate(chosen):
        demo = ""
        if shots:
            shown = [f"Summary: {d.short}" for d in drawn(pool, seed, index, shots)]
            demo = "Example summaries:\n\n" + "\n\n".join(shown)
            demo += "\n\nNow, write a summary of the following legal documents.\n"
        fields = {"demo": demo, "context": "\n\n".join(row.sources), "question": ""}
        judge = {"id": row.id, "expert_summary": row.long or "", "keypoints": row.keypoints}
        items.append(LongItem(fields, (row.short,), judge))
    return LongSet("multi_lexsum", tuple(items))


@cache
def load_long_set(task: str, data: str | None, samples: int, seed: int, shots: int) -> LongSet:
    """``task``'s questions as HELMET picks them, with their demonstrations."""
    if task == "narrativeqa":
        return narrativeqa_set(data, samples, seed, shots)
    if task == "multi_lexsum":
        return lexsum_set(data, samples, seed, shots)
    return infbench_set(task, data, samples, seed, shots)


def draw_long(task, rng: random.Random, kit: Kit, key: SampleKey, data: LongSet) -> Draw:
    """Exact protocol: the document's first tokens, as many as N leaves."""
    item = data.item(key.index)
    fields = {k: v for k, v in item.fields.items() if k != "context"}

    def fill(budget: int) -> Context:
        ids = kit.pieces.fresh(item.fields["context"])
        if len(ids) < budget:
            raise TooShort(budget - len(ids), "the document is shorter than this length")
        detail = {"document_tokens": len(ids), **({"judge": item.judge} if item.judge else {})}
        return Context(ids[:budget], 0, detail)

    return Draw(fields, item.answers, fill, prefix_shared=False)
