"""Frequent words extraction (fwe): which three coded words appear most often in a long coded text?

As RULER: a vocabulary of random six-letter words, one per 50 tokens of the prompt (its length less the
answer budget), ranked at random; the word of rank ``k`` appears ``floor(n * k^-alpha / zeta(alpha))``
times (Zipf, alpha 2), the top-ranked word being the noise word ``...`` that the question says to
ignore, and the answer being ranks 2 to 4. RULER grows ``n`` until the text no longer fits; we count
each word's tokens once, take the largest ``n`` whose text fits (an arithmetic search, no tokenising),
and fill the tokens left over with further ``...``, the last cut to the token.

The template puts the text after ``coded words. ``; the builder drops that trailing space and every
word here carries its own, so the first word reads as after a space like the rest.
"""

from __future__ import annotations

import random
import string

import numpy as np

from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort
from coca_eval.ruler.tasks import RulerTask

NOISE_WORD = "..."
TOKENS_PER_WORD_TYPE = 50  # RULER: vocabulary size = (length - answer budget) // 50
ANSWERS = 3


def vocabulary(rng: random.Random, size: int, letters: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choices(string.ascii_lowercase, k=letters)))
    vocab = sorted(words)
    rng.shuffle(vocab)
    vocab[0] = NOISE_WORD
    return vocab


def zipf_counts(n: int, size: int, alpha: float) -> np.ndarray:
    from scipy.special import zeta

    ranks = np.arange(1, size + 1, dtype=np.float64)
    return np.floor(n * ranks**-alpha / zeta(alpha)).astype(np.int64)


def draw_fwe(task: RulerTask, rng: random.Random, kit: Kit, key: SampleKey) -> Draw:
    size = max(ANSWERS + 2, (key.length - task.answer_budget) // TOKENS_PER_WORD_TYPE)
    vocab = vocabulary(rng, size, task.coded_word_length)
    answers = tuple(vocab[1 : 1 + ANSWERS])
    fill_rng = random.Random(rng.getrandbits(64))

    def fill(budget: int) -> Context:
        pieces = [kit.pieces.fresh(" " + w) for w in vocab]
        costs = np.array([len(p) for p in pieces], dtype=np.int64)
        n = _largest_fitting(lambda m: int(zipf_counts(m, size, task.alpha) @ costs), budget)
        counts = zipf_counts(n, size, task.alpha)
        if counts[ANSWERS] < 1 or counts[ANSWERS] <= counts[ANSWERS + 1]:
            needed = _smallest_clear(costs, size, task.alpha)
            raise TooShort(needed, "coded words whose top three are clear")
        order = [i for i, c in enumerate(counts) for _ in range(c)]
        fill_rng.shuffle(order)
        ids = [t for i in order for t in pieces[i]]
        dots = kit.pieces.piece(" " + NOISE_WORD)
        while len(ids) < budget:
            ids += dots
        detail = {"haystack": "coded words", "vocabulary": size, "counts": counts[1 : 1 + ANSWERS].tolist()}
        return Context(ids[:budget], 0, detail)

    return Draw({"query": ""}, answers, fill, prefix_shared=True)


def _largest_fitting(tokens, budget: int) -> int:
    """The largest ``n`` with ``tokens(n) <= budget`` (``tokens`` grows with ``n``), 0 if none."""
    high = 1
    while tokens(high) <= budget:
        high *= 2
    low = 0  # tokens(0) == 0 fits
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if tokens(mid) <= budget else (low, mid)
    return low


def _smallest_clear(costs: np.ndarray, size: int, alpha: float) -> int:
    """Tokens of the shortest text whose ranks 2-4 all appear and outnumber rank 5."""
    n = 1
    while True:
        counts = zipf_counts(n, size, alpha)
        if counts[ANSWERS] >= 1 and counts[ANSWERS] > counts[ANSWERS + 1]:
            return int(counts @ costs)
        n += 1
