"""HELMET's passage re-ranking (``msmarco_rerank_psg``): rank every listed MS MARCO passage by relevance
to a query, scored by NDCG@10 against the passages' relevance labels.

HELMET's reading (``load_msmarco_rerank`` in its ``data.py`` at 4526dfb): the questions are ``--samples``
keys (``qid``) sampled from the sorted keys by a generator seeded with ``--seed``, their rows in file
order; a passage reads ``[ID: id] Document (Title: title): text`` (``[ID: id] Document: text`` when
the question's passages have no title); each question gets two demonstrations from the demonstration
file (shuffled by a seed from the sha256 of its ``qid``, repeated ``qid``s dropped; its own ``qid``
left out, or, when that file is more than twice the test set, every test ``qid`` left out at once),
each listing its passages, its query and the ranking by label. The references are the passages'
labels (``qrel``); a sample keeps them as ``id:label``, best first.

Exact protocol: the relevant passages (label above 0) are whole, at depths drawn per sample; the others
follow in file order while they fit, the last cut to the token; only the passages shown are ranked.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, ConfigDict

from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort, insert, take
from coca_eval.helmet.data import data_file, read_rows

TEMPLATE = (
    "You are provided with a list of documents, each indicated by their ID. Rank each document based on "
    "their relevance to the question in descending order from most relelvant to least relevant texts. "
    "Include all documents in the rankings. Write your answer using the unique IDs, with the following "
    "format:\nRanking: ID3 > ID1 > ID2\n\n{demos}{context}\n\nQuery: {question}"
)  # HELMET's wording, its misspelling included: the prompt's tokens are HELMET's
ANSWER_PREFIX = "Ranking:"
TITLED, UNTITLED = "[ID: {id}] Document (Title: {title}): {text}", "[ID: {id}] Document: {text}"
FILES = ("msmarco/test_reranking_data_k{k}_dep3.jsonl", "msmarco/test_reranking_data_k10_dep3.jsonl")


class RankedPassage(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    text: str
    label: int
    title: str | None = None


class RerankRow(BaseModel):
    """A query of HELMET's ``msmarco/*.jsonl``: its ``qid``, text and passages with relevance labels."""

    model_config = ConfigDict(extra="allow", frozen=True)

    qid: str
    query: str
    ctxs: list[RankedPassage]


def passage_text(passage: RankedPassage, titled: bool) -> str:
    template = TITLED if titled else UNTITLED
    return template.format(id=passage.id, title=passage.title, text=passage.text)


def by_label(passages) -> list[RankedPassage]:
    """Best first; equal labels keep their file order (a stable sort, as HELMET's)."""
    return sorted(passages, key=lambda p: p.label, reverse=True)


def references(passages) -> tuple[str, ...]:
    return tuple(f"{p.id}:{p.label}" for p in by_label(passages))


@dataclass(frozen=True)
class RerankSet:
    rows: tuple[RerankRow, ...]
    demos: tuple[RerankRow, ...]
    demos_filtered: bool  # every test qid already left out of the demonstrations
    shots: int

    def row(self, index: int) -> RerankRow:
        if index >= len(self.rows):
            raise CocaEvalError(f"msmarco_rerank_psg: the file holds {len(self.rows)} queries; ask for fewer")
        return self.rows[index]

    def demos_text(self, row: RerankRow) -> str:
        """The question's demonstrations, each its passages, query and ranking, a blank line after each."""
        import numpy as np

        pool = list(self.demos) if self.demos_filtered else [d for d in self.demos if d.qid != row.qid]
        seed = abs(int(hashlib.sha256(row.qid.encode("utf-8")).hexdigest(), 16) % 2**31)
        titled = row.ctxs[0].title is not None
        text, seen = "", set()
        for i in np.random.default_rng(seed).permutation(len(pool)):
            demo = pool[int(i)]
            if demo.qid in seen:
                continue
            seen.add(demo.qid)
            passages = "\n\n".join(passage_text(p, titled) for p in demo.ctxs)
            ranking = " > ".join(p.id for p in by_label(demo.ctxs))
            text += f"{passages}\n\nQuery: {demo.query}\nRanking: {ranking}\n\n"
            if len(seen) == self.shots:
                break
        return text


@cache
def load_rerank_set(data: str | None, k: int, samples: int, seed: int, shots: int) -> RerankSet:
    test, demo = FILES
    rows = read_rows(str(data_file("msmarco_rerank_psg", test.format(k=k), data)), RerankRow)
    demos = read_rows(str(data_file("msmarco_rerank_psg", demo, data)), RerankRow)
    keys = sorted({r.qid for r in rows})
    picked = set(random.Random(seed).sample(keys, min(samples, len(keys))))
    chosen = tuple(r for r in rows if r.qid in picked)
    filtered = len(demos) > 2 * len(chosen)
    if filtered:
        demos = tuple(d for d in demos if d.qid not in {r.qid for r in chosen})
    return RerankSet(chosen, tuple(demos), filtered, shots)


def helmet_fields(data: RerankSet, index: int) -> tuple[dict[str, str], tuple[str, ...]]:
    """HELMET's fields for query ``index`` (every passage of the file listed) and its references."""
    row = data.row(index)
    titled = row.ctxs[0].title is not None
    context = "\n\n".join(passage_text(p, titled) for p in row.ctxs)
    return {"demos": data.demos_text(row), "context": context, "question": row.query}, references(row.ctxs)


def draw_rerank(task, rng: random.Random, kit: Kit, key: SampleKey, data: RerankSet) -> Draw:
    """Exact protocol: relevant passages whole at drawn depths, the rest in file order while they fit."""
    row = data.row(key.index)
    titled = row.ctxs[0].title is not None
    relevant = [p for p in row.ctxs if p.label > 0]
    others = [p for p in row.ctxs if p.label <= 0]
    depths = [rng.random() for _ in relevant]

    def fill(budget: int) -> Context:
        placed = [kit.pieces.fresh("\n\n" + passage_text(p, titled)) for p in relevant]
        used = sum(map(len, placed))
        if budget - used < 1:
            raise TooShort(used + 1, f"{len(relevant)} relevant passage(s) and one token")
        pieces = [
            kit.pieces.fresh(("\n\n" if i else "") + passage_text(p, titled)) for i, p in enumerate(others)
        ]
        if sum(map(len, pieces)) < budget - used:
            raise TooShort(budget - used - sum(map(len, pieces)), "the query's passages are too few for N")
        stream = take(iter(pieces), budget - used)
        ids, starts = insert(stream, list(zip(depths, placed, strict=True)))
        whole = len(stream.bounds) - 1
        cut = stream.ids[stream.bounds[-1] :]
        blank = kit.pieces.piece("\n\n") if whole else []  # a later passage's separator: no text of it
        listed = whole + (len(cut) > (len(blank) if cut == blank[: len(cut)] else 0))  # the cut one, shown
        detail = {"depths": [round(s / budget, 4) for s in starts], "passages": listed + len(relevant)}
        return Context(ids, 0, detail, answers=references(relevant + others[:listed]))

    fields = {"demos": data.demos_text(row), "question": row.query}
    return Draw(fields, references(row.ctxs), fill, prefix_shared=False)
