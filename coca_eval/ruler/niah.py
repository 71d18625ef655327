"""The eight needle-in-a-haystack tasks: keys, values, needles at depths, and the question.

As RULER: keys and values are ``adjective-noun`` words, seven-digit numbers or UUIDs; every key gets its
values, one needle each ("One of the special magic numbers for KEY is: VALUE."), shuffled; some keys are
asked for. In an essay haystack the needles go in at depths drawn from RULER's 40-point grid (0..100 %),
in the noise and needle haystacks at uniformly random places; either way at the piece boundary (sentence
or line) nearest the depth. The needle haystack is made of distractor needles with other keys and values.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.haystacks import noise_pieces
from coca_eval.generation.segments import TooShort, insert, take
from coca_eval.generation.values import random_value
from coca_eval.ruler.tasks import NIAH_NEEDLE, NOISE_TEXT, RulerTask

ESSAY_DEPTHS = tuple(round(100 * i / 39) / 100 for i in range(40))  # RULER's linspace(0, 100, 40), rounded


def _distinct(kind: str, rng: random.Random, n: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        value = random_value(kind, rng)
        if value not in taken:
            taken.add(value)
            out.append(value)
    return out


def needle_text(task: RulerTask, key: str, value: str) -> str:
    return NIAH_NEEDLE.format(type_needle_v=task.value_type, key=key, value=value)


def draw_niah(task: RulerTask, rng: random.Random, kit: Kit, key: SampleKey) -> Draw:
    taken: set[str] = set()
    n_keys = max(task.keys, task.queries)
    keys = _distinct(task.key_type, rng, n_keys, taken)
    values = [_distinct(task.value_type, rng, task.values, taken) for _ in keys]
    needles = [(k, v) for k, vs in zip(keys, values, strict=True) for v in vs]
    rng.shuffle(needles)
    asked = sorted(rng.sample(range(n_keys), task.queries))
    queries = [keys[i] for i in asked]
    answers = tuple(v for i in asked for v in values[i])
    query = queries[0] if len(queries) == 1 else ", ".join(queries[:-1]) + ", and " + queries[-1]
    if task.haystack == "essay":
        depths = sorted(rng.sample(ESSAY_DEPTHS, len(needles)))
    else:
        depths = sorted(rng.random() for _ in needles)
    fill_rng = random.Random(rng.getrandbits(64))

    def fill(budget: int) -> Context:
        sep = " " if task.haystack == "essay" else "\n"
        needle_ids = [kit.pieces.fresh(sep + needle_text(task, k, v)) for k, v in needles]
        used = sum(map(len, needle_ids))
        if budget - used < 1:
            raise TooShort(used + 1, f"{len(needles)} needle(s) and one haystack token")
        stream = take(_haystack(task, kit, fill_rng, taken), budget - used)
        ids, starts = insert(stream, list(zip(depths, needle_ids, strict=True)))
        where = {v: starts[i] / budget for i, (_, v) in enumerate(needles)}
        detail = {"haystack": kit.haystack_name(task), "depths": [round(where[a], 4) for a in answers]}
        shared = 0 if task.haystack == "needle" else min(starts)
        return Context(ids, shared, detail)

    return Draw({"type_needle_v": task.value_noun, "query": query}, answers, fill)


def _haystack(task: RulerTask, kit: Kit, rng: random.Random, taken: set[str]) -> Iterator[list[int]]:
    if task.haystack == "noise":
        return noise_pieces(kit.pieces, NOISE_TEXT)
    if task.haystack == "essay":
        return kit.essay().pieces(kit.pieces)
    return _distractors(task, kit, rng, taken)


def _distractors(task: RulerTask, kit: Kit, rng: random.Random, taken: set[str]) -> Iterator[list[int]]:
    """RULER's needle haystack: needles whose keys and values are none of the sample's own."""
    sep = ""
    while True:
        key = _distinct(task.key_type, rng, 1, taken)[0]
        value = _distinct(task.value_type, rng, 1, taken)[0]
        yield kit.pieces.fresh(sep + needle_text(task, key, value))
        sep = "\n"
