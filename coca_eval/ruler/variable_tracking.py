"""Variable tracking (vt): follow a chain of assignments ``VAR B = VAR A`` back to a value.

As RULER: each chain is ``num_hops + 1`` five-letter upper-case names, the first assigned a five-digit
value and each later one assigned the one before; the chain's lines go in at random places of the noise
haystack, in order; the question gives the value and the answer is every name in its chain. RULER puts
one worked example before the task, built the same way with three-letter names and at most 500 tokens
(the most noise lines that fit), its answer written out; so do we, fitted with the model's tokenizer.
"""

from __future__ import annotations

import random
import string

from coca_eval.generation.draws import Context, Draw, Kit, SampleKey
from coca_eval.generation.haystacks import noise_pieces
from coca_eval.generation.segments import TooShort, insert, take
from coca_eval.ruler.tasks import NOISE_TEXT, RulerTask

EXAMPLE_TOKENS = 500


def _names(rng: random.Random, n: int, letters: int) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        name = "".join(rng.choices(string.ascii_uppercase, k=letters))
        if name not in names:
            names.append(name)
    return names


def _chain(names: list[str], value: str) -> list[str]:
    """RULER's lines, its trailing space after each ``VAR name`` reference included."""
    return [f"VAR {names[0]} = {value}"] + [
        f"VAR {b} = VAR {a} " for a, b in zip(names, names[1:], strict=False)
    ]


def _value(rng: random.Random) -> str:
    return str(rng.randint(10000, 99998))


def draw_vt(task: RulerTask, rng: random.Random, kit: Kit, key: SampleKey) -> Draw:
    names = _names(rng, task.chains * (task.hops + 1), 5)
    chains = [names[i : i + task.hops + 1] for i in range(0, len(names), task.hops + 1)]
    values = [_value(rng) for _ in chains]
    lines = [_chain(c, v) for c, v in zip(chains, values, strict=True)]
    depths = [sorted(rng.random() for _ in chain) for chain in lines]
    fields = {"query": values[0], "num_v": task.hops + 1}
    # RULER ends the example with "\n" and inserts it followed by another (variable_tracking.py at c3f5e3b)
    lead = worked_example(task, rng, kit) + "\n\n"

    def fill(budget: int) -> Context:
        planted = [
            (d, line) for c, ds in zip(lines, depths, strict=True) for d, line in zip(ds, c, strict=True)
        ]
        inserts = [(d, kit.pieces.fresh("\n" + line)) for d, line in planted]
        used = sum(len(ids) for _, ids in inserts)
        if budget - used < 1:
            raise TooShort(used + 1, f"{len(inserts)} chain lines and one haystack token")
        stream = take(noise_pieces(kit.pieces, NOISE_TEXT), budget - used)
        ids, starts = insert(stream, inserts)
        n_first = len(lines[0])
        detail = {"haystack": "noise", "depths": [round(s / budget, 4) for s in starts[:n_first]]}
        return Context(ids, 0, detail)

    return Draw(fields, tuple(chains[0]), fill, lead=lead, prefix_shared=False)


def worked_example(task: RulerTask, rng: random.Random, kit: Kit) -> str:
    """RULER's one-shot example: as many noise lines as fit in 500 tokens, the answer written out."""
    names, value = _names(rng, task.hops + 1, 3), _value(rng)
    chain = _chain(names, value)
    slots = rng.random  # where each chain line goes among the noise lines
    answer = task.answer_prefix.format(num_v=task.hops + 1, query=value) + " " + " ".join(names)

    def text(noise_lines: int) -> str:
        at = sorted(int(slots() * (noise_lines + 1)) for _ in chain)
        body = [NOISE_TEXT] * noise_lines
        for j, (pos, line) in enumerate(zip(at, chain, strict=True)):
            body.insert(pos + j, line)
        return task.template.format(context="\n".join(body), query=value) + answer

    fixed = len(kit.encode(text(0)))
    per_line = len(kit.pieces.piece("\n" + NOISE_TEXT))
    n = max(0, (EXAMPLE_TOKENS - fixed) // per_line)
    example = text(n)
    while n > 0 and len(kit.encode(example)) > EXAMPLE_TOKENS:
        n -= 1
        example = text(n)
    return example
