"""Common words extraction (cwe): which ten words appear most often in a long numbered list?

As RULER: ten common words appear 30 times each and every other word 3 times (6 and 1 below 4096
tokens), shuffled into a list ``1. word 2. word ...``, after one worked example (40 words at 10 and 3
repeats; 20 words at 3 and 1 below 4096) whose answer is written out. RULER fits the list by trying
word counts; we count tokens: each list number and each word is a token piece, so the largest word
count that fits is found by adding up, and the tokens left over are filled with further words that
appear once each (never as often as a common word), the last one cut to the token.
"""

from __future__ import annotations

import random

from coca_eval.errors import CocaEvalError
from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort
from coca_eval.ruler.tasks import RulerTask
from coca_eval.ruler.words import book_words, common_word_pool

SMALL = 4096  # RULER's lighter setting below this length


def numbered(words: list[str]) -> str:
    return " ".join(f"{i + 1}. {w}" for i, w in enumerate(words))


def _example_list(words: list[str], common: int, repeats: int, once: int, rng: random.Random) -> list[str]:
    items = words[:common] * repeats + words[common:] * once
    rng.shuffle(items)
    return items


def draw_cwe(task: RulerTask, rng: random.Random, kit: Kit, key: SampleKey) -> Draw:
    small = key.length < SMALL
    shot_words, shot_repeats, shot_once = (20, 3, 1) if small else (40, 10, 3)
    repeats, once = (6, 1) if small else (task.common_repeats, task.uncommon_repeats)
    pool = common_word_pool()
    shot = rng.sample(pool, shot_words)
    shot_list = _example_list(shot, task.common_words, shot_repeats, shot_once, rng)
    answer = " " + numbered(shot[: task.common_words])
    example = task.template.format(context=numbered(shot_list), query="")
    lead = example + task.answer_prefix + answer + "\n"  # without a chat template; see Draw.example
    order = rng.sample(pool, len(pool))
    common = order[: task.common_words]
    fill_rng = random.Random(rng.getrandbits(64))

    def fill(budget: int) -> Context:
        lister = _Lister(kit.pieces)
        base = repeats * sum(lister.word(w) for w in common)
        items = task.common_words * repeats
        if lister.numbers(items) + base > budget:
            raise TooShort(lister.numbers(items) + base, f"{task.common_words} common words x {repeats}")
        n, total = task.common_words, lister.numbers(items) + base
        while True:  # one more distinct word (``once`` more items) while it fits
            word = _word(order, n, fill_rng)
            more = once * lister.word(word) + lister.numbers(items + once) - lister.numbers(items)
            if total + more > budget:
                break
            n, items, total = n + 1, items + once, total + more
        words = common * repeats + order[task.common_words : n] * once
        fill_rng.shuffle(words)
        ids: list[int] = []
        for i, w in enumerate(words):
            ids += lister.number_piece(i) + lister.word_piece(w)
        extra = n
        while len(ids) < budget:  # further words, once each, the last cut to the token
            ids += lister.number_piece(len(words)) + lister.word_piece(_word(order, extra, fill_rng))
            words.append(order[extra])
            extra += 1
        detail = {"haystack": "words", "distinct_words": n, "repeats": [repeats, once]}
        return Context(ids[:budget], 0, detail)

    return Draw({"query": ""}, tuple(common), fill, lead=lead, example=(example, answer), prefix_shared=False)


def _word(order: list[str], i: int, rng: random.Random) -> str:
    """The ``i``-th word of the sample's order, extended with the books' words when the lists run out."""
    if i >= len(order):
        have = set(order)
        extension = [w for w in book_words() if w not in have]
        if not extension:
            raise CocaEvalError(f"cwe needs more than {len(order)} distinct words at this length")
        order.extend(rng.sample(extension, len(extension)))
    return order[i]


class _Lister:
    """Token pieces of a numbered list: ``1.`` and `` 2.`` ... and each word after a space."""

    def __init__(self, pieces) -> None:
        self.pieces = pieces
        self._cumulative = [0]

    def number_piece(self, i: int) -> list[int]:
        return self.pieces.piece(f"{i + 1}." if i == 0 else f" {i + 1}.")

    def word_piece(self, word: str) -> list[int]:
        return self.pieces.piece(" " + word)

    def word(self, word: str) -> int:
        return len(self.word_piece(word))

    def numbers(self, items: int) -> int:
        """Tokens of the numbers of the first ``items`` list items."""
        while len(self._cumulative) <= items:
            i = len(self._cumulative) - 1
            self._cumulative.append(self._cumulative[-1] + len(self.number_piece(i)))
        return self._cumulative[items]
