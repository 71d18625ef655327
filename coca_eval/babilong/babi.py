"""bAbI task files (the ``tasks_1-20_v1-2`` format) read into single-question samples, and a small
generator of our own for qa1-qa3 in the same format and grammar, so the tasks run offline.

The format: a story is numbered lines, restarting at 1; a fact is ``N text``, a question is
``N question<TAB>answer<TAB>supporting fact numbers``. A story may ask several questions; as BABILong
reads it (``get_dataset_df``), each question becomes one sample holding the story's facts up to it (the
earlier questions dropped), its answer and the facts it rests on.

The generator (``generate_babi``) is ours, written from the tasks' definitions: people move between six
rooms (qa1: where is a person), carry objects (qa2: where is an object, which rests on two facts) and we
ask where an object was before its last room (qa3). Its lines follow bAbI's phrasing (``Mary moved to
the bathroom.``, ``Sandra got the football there.``, ``Where was the milk before the office?``) so the
prompts' examples and BABILong's label sets apply; it is not bAbI's data, and is named so wherever it
is used.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.references import check_references

PEOPLE = ("Mary", "John", "Daniel", "Sandra")
ROOMS = ("bathroom", "bedroom", "garden", "hallway", "kitchen", "office")
OBJECTS = ("apple", "football", "milk")
MOVES = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
TAKES = ("got", "picked up", "grabbed", "took")
DROPS = ("dropped", "discarded", "put down", "left")


@dataclass(frozen=True)
class BabiSample:
    facts: tuple[str, ...]
    question: str
    answer: str
    supporting: tuple[int, ...]  # indices into ``facts`` of the facts the answer rests on
    story: int = 0  # which story of the file asks it (0, 1, ... in file order): its questions share facts


def parse_babi(text: str, source: str = "bAbI file") -> list[BabiSample]:
    """Every question of a bAbI file as a sample (see the module doc), numbered by the story that asks
    it (a line numbered 1 starts the next story); a malformed line is one error, and so is a question
    whose answer is empty after normalisation (:mod:`coca_eval.references`)."""
    samples: list[BabiSample] = []
    story: list[tuple[int, str]] = []
    stories = 0  # stories begun so far; the current one's number is stories - 1
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        head, _, rest = line.partition(" ")
        if not head.isdigit() or not rest:
            raise CocaEvalError(f"{source} line {number}: not a numbered bAbI line")
        if int(head) == 1 or not stories:
            story, stories = [], stories + 1
        if "\t" not in rest:
            story.append((int(head), rest.strip()))
            continue
        fields = rest.split("\t")
        if len(fields) < 3:
            raise CocaEvalError(f"{source} line {number}: a question needs its answer and supporting facts")
        question, answer, support = fields[0].strip(), fields[1].strip(), fields[2].split()
        check_references([answer], f"{source} line {number}")
        order = {n: i for i, (n, _) in enumerate(story)}
        try:
            supporting = tuple(order[int(n)] for n in support)
        except (KeyError, ValueError):
            raise CocaEvalError(f"{source} line {number}: a supporting fact is not in the story") from None
        facts = tuple(t for _, t in story)
        samples.append(BabiSample(facts, question, answer, supporting, stories - 1))
    if not samples:
        raise CocaEvalError(f"{source} holds no questions")
    return samples


def read_babi(path: Path) -> list[BabiSample]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"cannot read {path} ({type(exc).__name__})") from None
    return parse_babi(text, str(path))


class _World:
    """Where each person is and who holds what, as facts are told (``n``: the fact's line number)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.where: dict[str, str] = {}
        self.moved_at: dict[str, int] = {}
        self.holder: dict[str, str | None] = dict.fromkeys(OBJECTS)
        self.trail: dict[str, list[tuple[str, int]]] = {o: [] for o in OBJECTS}  # object -> (room, fact)

    def move(self, n: int) -> str:
        person = self.rng.choice(PEOPLE)
        room = self.rng.choice([r for r in ROOMS if r != self.where.get(person)])
        self.where[person], self.moved_at[person] = room, n
        for item, holder in self.holder.items():
            if holder == person:
                self.trail[item].append((room, n))
        return f"{person} {self.rng.choice(MOVES)} the {room}."

    def handle(self, n: int) -> str | None:
        """A person in a room takes a free object there, or drops one they hold (None: nobody can)."""
        placed = [p for p in PEOPLE if p in self.where]
        if not placed:
            return None
        person = self.rng.choice(placed)
        held = [o for o, h in self.holder.items() if h == person]
        here = self.where[person]  # an object lies where it was dropped; one never seen, anywhere
        free = [
            o
            for o, h in self.holder.items()
            if h is None and (not self.trail[o] or self.trail[o][-1][0] == here)
        ]
        if held and (not free or self.rng.random() < 0.4):
            item = self.rng.choice(held)
            self.holder[item] = None
            return f"{person} {self.rng.choice(DROPS)} the {item}."
        if not free:
            return None
        item = self.rng.choice(free)
        self.holder[item] = person
        self.trail[item].append((self.where[person], n))
        return f"{person} {self.rng.choice(TAKES)} the {item} there."


def generate_babi(task: str, stories: int, seed: int) -> str:
    """``stories`` stories of ``task`` (qa1, qa2 or qa3) in bAbI's file format, deterministic in ``seed``;
    each story asks up to five questions."""
    if task not in ("qa1", "qa2", "qa3"):
        raise ValueError(f"the generator writes qa1-qa3, not {task}")
    rng = random.Random(f"coca-eval-babi:{task}:{seed}")
    lines: list[str] = []
    for _ in range(stories):
        world, number, asked = _World(rng), 0, 0
        while asked < 5 and number < 80:
            fact = (
                world.move(number + 1) if task == "qa1" or rng.random() < 0.55 else world.handle(number + 1)
            )
            if fact is None:
                continue
            number += 1
            lines.append(f"{number} {fact}")
            question = _question(task, world, rng) if rng.random() < 0.3 else None
            if question is not None:
                number += 1
                text, answer, support = question
                lines.append(f"{number} {text}\t{answer}\t{' '.join(map(str, support))}")
                asked += 1
    return "\n".join(lines) + "\n"


def _question(task: str, world: _World, rng: random.Random) -> tuple[str, str, list[int]] | None:
    """A question the story so far answers: its text, answer and supporting fact numbers."""
    if task == "qa1":
        person = rng.choice(sorted(world.where))
        return f"Where is {person}?", world.where[person], [world.moved_at[person]]
    carried = [o for o, trail in world.trail.items() if trail]
    if not carried:
        return None
    item = rng.choice(carried)
    trail = world.trail[item]
    if task == "qa2":
        return f"Where is the {item}?", trail[-1][0], [trail[-1][1]]
    rooms = [room for room, _ in trail]
    changes = [i for i in range(1, len(rooms)) if rooms[i] != rooms[i - 1]]
    if not changes:
        return None
    last = changes[-1]
    return (
        f"Where was the {item} before the {rooms[last]}?",
        rooms[last - 1],
        [trail[last - 1][1], trail[last][1]],
    )
