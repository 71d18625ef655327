"""BABILong's ``generate`` samples at exact lengths: a bAbI sample's facts spread through book text.

As BABILong's ``NoiseInjectionDataset`` and ``SentenceSampler`` build a sample (``babilong_utils.py``):
noise is whole sentences of a book, each at least 10 tokens, read on from a place in the book; the
facts keep their order and go in between sentences at places drawn uniformly (with repeats, sorted);
the last sentence is cut so the context is exactly its budget. Here the budget is what N leaves after
the prompt's fixed parts and the answer budget, so every prompt is exactly N minus the answer budget
tokens in the model's own tokenizer, and the draw is seeded per sample.

Two rules of ours: a fact never goes before the first sentence (the context starts with book text, as
BABILong's does after it strips the decoded text), and a sentence that names any of the sample's
people, objects or the task's answers is skipped, so the noise cannot change the answer. Each sample
records its question, the story that asks it (questions of one story share facts: the cell's interval
treats them as a cluster) and its facts' depths (where each starts, as a fraction of the context).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from coca_eval.babilong.babi import BabiSample
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort, take

MIN_SENTENCE_TOKENS = 10  # BABILong's SentenceSampler default
STORY_TOO_LONG = "fact(s) and one book sentence"  # what a story whose facts overfill N is short of


def entities(sample: BabiSample, labels: list[str]) -> set[str]:
    """The words noise must not say: the names in the facts and question (bAbI's only capitalised words
    but the question's first), the objects they name, and the task's answers."""
    text = " ".join((*sample.facts, sample.question))
    names = {w for w in re.findall(r"[A-Za-z]+", text) if w[0].isupper()} - QUESTION_WORDS
    objects = {w for w in re.findall(r"[a-z]+", text) if w in OBJECT_WORDS}
    return {w.lower() for w in (*names, *objects, *labels)}


OBJECT_WORDS = {"apple", "football", "milk"}
QUESTION_WORDS = {"Where", "What", "Who", "How", "Is", "Does", "Did", "Why"}


def mentions(sentence: str, words: set[str]) -> bool:
    return any(w.lower() in words for w in re.findall(r"[A-Za-z]+", sentence))


def draw_babilong(
    task, rng: random.Random, kit: Kit, key: SampleKey, samples: list, labels: list[str]
) -> Draw:
    """Sample ``key.index`` of ``samples`` with its facts spread through the essay haystack."""
    sample: BabiSample = samples[key.index]
    banned = entities(sample, labels)
    start = rng.randrange(len(kit.essay().sentences))
    fill_rng = random.Random(rng.getrandbits(64))

    def fill(budget: int) -> Context:
        facts = [kit.pieces.fresh(" " + fact) for fact in sample.facts]
        used = sum(map(len, facts))
        if budget - used < MIN_SENTENCE_TOKENS:
            raise TooShort(used + MIN_SENTENCE_TOKENS, f"{len(facts)} {STORY_TOO_LONG}")
        stream = take(_noise(kit, start, banned), budget - used)
        between = stream.bounds[1:] or [len(stream.ids)]  # after the first sentence (cut: after it)
        places = sorted(fill_rng.choice(between) for _ in facts)  # drawn with repeats, as BABILong's
        ids, depths, done = [], [], 0
        for place, fact in zip(places, facts, strict=True):
            ids += stream.ids[done:place]
            done = place
            depths.append(round(len(ids) / budget, 4))
            ids += fact
        ids += stream.ids[done:]
        detail = {"question": sample.question, "story": sample.story, "depths": depths, "facts": len(facts)}
        return Context(ids, 0, detail)

    fields = {"question": sample.question}
    return Draw(fields, (sample.answer,), fill, prefix_shared=False)


def _noise(kit: Kit, start: int, banned: set[str]) -> Iterator[list[int]]:
    """Book sentences from ``start`` on, each at least 10 tokens and naming nothing of the sample."""
    sentences = kit.essay().sentences
    lead, i, skipped = "", start, 0
    while True:
        sentence = sentences[i % len(sentences)]
        i += 1
        piece = kit.pieces.piece(lead + sentence)
        if len(piece) < MIN_SENTENCE_TOKENS or mentions(sentence, banned):
            skipped += 1
            if skipped > 100 * len(sentences):
                raise TooShort(1, "book sentences that name nothing of the sample")
            continue
        yield piece
        lead = " "
