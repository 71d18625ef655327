"""HELMET's JSON key-value retrieval (``json_kv``): one JSON object of random UUID pairs, the value of
one key asked for.

HELMET reads pre-generated files from the hub (``data/json_kv/test_k{105,220,440,900,1800}_dep6.jsonl``);
the task is synthetic, so it is generated here and runs offline. The object is laid out as the
lost-in-the-middle key-value task lays it out (HELMET's prompt cites it): ``{"key": "value",`` one pair
per line, a space before each later pair, ``}`` closing it. The question names the key in quotes.
HELMET's two demonstrations (``Key: ...`` / ``Corresponding value: ...``) are pairs of the same object,
so they show the format without giving the answer away.

Exact protocol: the gold pair and the demonstration pairs go in at depths drawn per sample; the rest
of the object is distractor pairs added while they fit, the last one cut to the token, so the prompt
is exactly N minus the answer budget. The gold pair's depth is recorded. HELMET's files fix each row's
depth on a grid (their ``depth`` field); the grid's values are in its data, not its code, so a depth
is drawn here instead (docs/helmet.md, differences).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.segments import TooShort, insert, take
from coca_eval.generation.values import random_value

TEMPLATE = (
    "{context}\n\nExtract the value corresponding to the specified key in the JSON object below.\n\n"
    "{demos}Key: {question}"
)
ANSWER_PREFIX = "Corresponding value:"  # HELMET's system template: after a newline, or opening a chat turn
DEMO = "Key: {key}\nCorresponding value: {value}"
PAIR = '"{key}": "{value}"'
SEPARATOR = ",\n "  # between pairs
OPEN, CLOSE = "{", "}"


def _pairs(rng: random.Random, n: int, taken: set[str]) -> list[tuple[str, str]]:
    out = []
    while len(out) < n:
        key, value = random_value("uuids", rng), random_value("uuids", rng)
        if key not in taken and value not in taken and key != value:
            taken.update((key, value))
            out.append((key, value))
    return out


def demos_text(pairs: list[tuple[str, str]]) -> str:
    """HELMET's demonstrations: each pair as a question answered, a blank line after each."""
    return "".join(DEMO.format(key=f'"{k}"', value=v) + "\n\n" for k, v in pairs)


def draw_json_kv(task, rng: random.Random, kit: Kit, key: SampleKey, shots: int = 2) -> Draw:
    """One sample: the gold pair, ``shots`` demonstration pairs, their depths, and the distractors."""
    taken: set[str] = set()
    gold, *demos = _pairs(rng, 1 + shots, taken)
    depths = [rng.random() for _ in range(1 + shots)]
    fill_rng = random.Random(rng.getrandbits(64))

    def fill(budget: int) -> Context:
        placed = [kit.pieces.fresh(SEPARATOR + PAIR.format(key=k, value=v)) for k, v in (gold, *demos)]
        close = kit.pieces.piece(CLOSE)
        used = sum(map(len, placed)) + len(close)
        if budget - used < 1:
            raise TooShort(used + 1, f"the gold and {shots} demonstration pair(s), braces and one token")
        stream = take(_distractors(kit, fill_rng, taken), budget - used)
        if len(stream.bounds) < 2:  # the pairs go after the object's first pair, which must be whole
            raise TooShort(used + len(stream.ids) + 1, "the object's first pair whole")
        ids, starts = insert(stream, list(zip(depths, placed, strict=True)))
        detail = {"depths": [round(starts[0] / budget, 4)], "pairs": _whole_pairs(stream) + len(placed)}
        return Context(ids + close, 0, detail)

    fields = {"demos": demos_text(demos), "question": f'"{gold[0]}"'}
    return Draw(fields, (gold[1],), fill, prefix_shared=False)


def _whole_pairs(stream) -> int:
    """Distractor pairs wholly inside the stream (its last one may be cut)."""
    return len(stream.bounds) - 1


def _distractors(kit: Kit, rng: random.Random, taken: set[str]) -> Iterator[list[int]]:
    """The object's other pairs: the first opens it, each later one follows a separator."""
    lead = OPEN
    while True:
        ((key, value),) = _pairs(rng, 1, taken)
        yield kit.pieces.fresh(lead + PAIR.format(key=key, value=value))
        lead = SEPARATOR
