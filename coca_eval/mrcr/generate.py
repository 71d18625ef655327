"""MRCR conversations built here (``--source generate``) at exactly N tokens in the model's own
tokenizer, chat template included and the answer budget counted.

A conversation is many user requests for a piece of writing ("Write a poem about lanterns.", in a few
phrasings), each answered by a passage of the embedded public-domain books (a run of whole sentences,
no passage used twice in a conversation). Among them stand ``k`` identical requests (the needles, k =
2, 4 or 8); the others are distractors drawn to confuse: a third share the needles' topic in another
form, a third their form on another topic, a third neither. The final request asks for the i-th
needle's answer again, word for word, behind a random string of 10 letters and digits; the reference
is that string followed by the needle's passage. Needle positions among the turns and i are drawn per
sample and recorded (the i-th needle's depth feeds the depth x length heat map).

The filler answers are whole turns except the last distractor's, which is cut at the token so that
the prompt is exactly N minus the answer budget: the conversation is planned from the template's
frames of a short conversation, rendered whole, and the cut turn absorbs any difference a template
that frames turns unevenly makes.

Sample ``i`` of a needle count at length N draws everything from a seed of ``(seed, task, N, i)``.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import PromptSample
from coca_eval.mrcr.conversation import ConversationFrame
from coca_eval.mrcr.scoring import chance_floor

FORMS = ("poem", "short story", "letter", "essay", "speech", "diary entry", "blog post", "riddle")
ASKS = (
    "Write {article} {form} about {topic}.",
    "Please write {article} {form} about {topic}.",
    "Could you write me {article} {form} about {topic}?",
)
FINAL_ASK = (
    "Repeat word for word the {ordinal} {form} about {topic} that you wrote in this conversation, "
    "counting from the first one. Begin your reply with {prefix} and add nothing else."
)
PASSAGE_TOKENS = (24, 64)  # a passage's length in the model's tokens: whole sentences within these
ANSWER_BUDGET = 96  # the random string, the longest passage, the end of turn, and room to spare
PREFIX_CHARS = 10
SLACK = 256  # tokens the cut turn holds beyond its share, for a template that frames turns unevenly
UNEVEN_TRIES = 16


@dataclass(frozen=True)
class Turn:
    """One request and its answer, as text and as the model's tokens."""

    ask: str
    answer: str
    ask_ids: list[int]
    answer_ids: list[int]
    needle: bool = False


@dataclass
class Drawer:
    """One sample's random choices: its generator, the books' sentences and what is used of them."""

    rng: random.Random
    sentences: list[str]
    encode: object
    used: set[int] = field(default_factory=set)

    def passage(self, low: int, high: int | None) -> tuple[str, list[int]]:
        """Whole sentences from a random start, ``low`` to ``high`` tokens (no upper end: None), none
        already in this conversation."""
        for _ in range(200):
            start = self.rng.randrange(len(self.sentences))
            end, text = start + 1, self.sentences[start]
            ids = self.encode(text)
            while len(ids) < low and end < len(self.sentences):
                text, end = f"{text} {self.sentences[end]}", end + 1
                ids = self.encode(text)
            fits = len(ids) >= low and (high is None or len(ids) <= high)
            if fits and self.used.isdisjoint(range(start, end)):
                self.used.update(range(start, end))
                return text, ids
        raise CocaEvalError(f"the books hold no unused passage of {low}-{high} tokens for this conversation")

    def ask(self, form: str, topic: str, phrasing: str | None = None) -> str:
        phrasing = phrasing or self.rng.choice(ASKS)
        article = "an" if form[0] in "aeiou" else "a"
        return phrasing.format(article=article, form=form, topic=topic)

    def turn(self, ask: str, low: int = PASSAGE_TOKENS[0], high: int | None = PASSAGE_TOKENS[1]) -> Turn:
        answer, answer_ids = self.passage(low, high)
        return Turn(ask, answer, self.encode(ask), answer_ids)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


class GeneratedConversations:
    """Builds MRCR samples for one tokenizer and conversation frame."""

    kind = "MRCR task"

    def __init__(self, frame: ConversationFrame, encode, decode, sentences: list[str], definitions):
        self.frame, self.encode, self.decode = frame, encode, decode
        self.sentences, self.definitions = sentences, definitions

    def haystack_name(self, task) -> str:
        return "books"

    def build(self, task: str, length: int, samples: int, seed: int, prompt_length: int) -> list:
        spec = self.definitions(task)
        return [self.build_one(spec, length, i, seed, prompt_length) for i in range(samples)]

    def build_one(self, task, length: int, index: int, seed: int, prompt_length: int) -> PromptSample:
        rng = random.Random(f"coca-eval-mrcr:{seed}:{task.name}:{length}:{index}")
        draw = Drawer(rng, self.sentences, self.encode)
        form, topic = rng.choice(FORMS), rng.choice(_topics())
        needle_ask = draw.ask(form, topic)
        needles = [draw.turn(needle_ask) for _ in range(task.needles)]
        needles = [Turn(t.ask, t.answer, t.ask_ids, t.answer_ids, needle=True) for t in needles]
        wanted = rng.randint(1, task.needles)
        prefix = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(PREFIX_CHARS))
        final = FINAL_ASK.format(ordinal=ordinal(wanted), form=form, topic=topic, prefix=prefix)
        filler, keep = self._fill(draw, (form, topic), needles, self.encode(final), prompt_length, task)
        turns = _interleave(rng, filler, needles)
        rendered, turns = self._exact(turns, keep, final, prompt_length)
        return self._sample(task, index, rendered, turns, final, prefix, wanted, form, topic)

    def _fill(self, draw: Drawer, needle: tuple, needles: list[Turn], final: list[int], room: int, task):
        """The distractor turns that, with the needles, fill ``room`` tokens: whole turns, then one to
        cut (holding more tokens than it keeps), and how many of its answer's tokens it keeps."""
        frames = self.frame.frames(["user", "assistant", "user", "assistant", "user"])
        head, between, after, end = (len(frames[i]) for i in (0, 1, 2, -1))
        prompt = room
        room -= head + len(final) + end
        room -= sum(len(t.ask_ids) + len(t.answer_ids) + between + after for t in needles)
        whole, turn = [], self._distractor(draw, *needle)
        while True:
            upcoming = self._distractor(draw, *needle)
            cost = len(turn.ask_ids) + len(turn.answer_ids) + between + after
            if room - cost < len(upcoming.ask_ids) + between + after + 1:
                break
            whole.append(turn)
            room, turn = room - cost, upcoming
        keep = room - (len(turn.ask_ids) + between + after)
        if keep < 1:
            raise CocaEvalError(
                f"{task.name}: {task.needles} needles, a distractor and the final request need "
                f"{prompt + 1 - keep} prompt tokens, {1 - keep} more than N leaves; give a longer length"
            )
        longer = draw.turn(turn.ask, low=keep + SLACK, high=None)
        return [*whole, Turn(turn.ask, "", turn.ask_ids, longer.answer_ids)], keep

    def _distractor(self, draw: Drawer, form: str, topic: str) -> Turn:
        """A request that is not the needles': their topic in another form, their form on another
        topic, or neither, a third of the time each."""
        kind = draw.rng.randrange(3)
        while True:
            other_form = form if kind == 1 else draw.rng.choice(FORMS)
            other_topic = topic if kind == 0 else draw.rng.choice(_topics())
            if (other_form, other_topic) != (form, topic):
                return draw.turn(draw.ask(other_form, other_topic))

    def _exact(self, turns: list[Turn], keep: int, final: str, target: int):
        """The conversation rendered whole with the cut turn keeping ``keep`` tokens, then corrected
        for a template whose frames grow as turns go on (numbered turns): the cut turn keeps more or
        fewer, and where it cannot give enough the last whole distractor is left out."""
        roles = ["user", "assistant"] * len(turns) + ["user"]
        final_ids = self.encode(final)
        cut_at = max(i for i, t in enumerate(turns) if not t.needle)
        full = turns[cut_at]
        for _ in range(UNEVEN_TRIES):
            turns[cut_at] = Turn(full.ask, "", full.ask_ids, full.answer_ids[:keep])
            contents = [ids for t in turns for ids in (t.ask_ids, t.answer_ids)] + [final_ids]
            rendered = self.frame.render(roles[: 2 * len(turns) + 1], contents)
            gap = target - len(rendered.ids)
            if gap == 0:
                turns[cut_at] = Turn(
                    full.ask, self.decode(full.answer_ids[:keep]), full.ask_ids, full.answer_ids[:keep]
                )
                return rendered, turns
            if keep + gap > len(full.answer_ids):
                break
            if keep + gap >= 1:
                keep += gap
                continue
            spare = [i for i, t in enumerate(turns) if not t.needle and i != cut_at]
            if not spare:
                break
            del turns[spare[-1]]
            cut_at -= spare[-1] < cut_at
        raise CocaEvalError(f"the {self.frame.name} frames this conversation's turns too unevenly to fill")

    def _sample(self, task, index, rendered, turns, final, prefix, wanted, form, topic) -> PromptSample:
        n = len(rendered.ids)
        needle_turns = [i for i, t in enumerate(turns) if t.needle]
        target = turns[needle_turns[wanted - 1]]
        answer = prefix + target.answer
        depths = [rendered.spans[2 * i + 1][0] / n for i in needle_turns]
        messages = [
            {"role": role, "content": text}
            for t in turns
            for role, text in (("user", t.ask), ("assistant", t.answer))
        ] + [{"role": "user", "content": final}]
        detail = {
            "prefix": prefix,
            "needle": f"{form} about {topic}",
            "wanted": wanted,
            "needle_turns": needle_turns,
            "turns": len(turns),
            "depths": [depths[wanted - 1]],
            "needle_depths": depths,
            "chance": chance_floor(answer, prefix, [turns[i].answer for i in needle_turns]),
        }
        shared = rendered.spans[0][0]  # the template's head: the same for every conversation
        return PromptSample(
            task.name, index, rendered.ids, (answer,), shared, detail, messages=tuple(messages)
        )


def _interleave(rng: random.Random, filler: list[Turn], needles: list[Turn]) -> list[Turn]:
    """The needles at drawn places among the distractors (kept in their order, the cut one last)."""
    total = len(filler) + len(needles)
    places = set(rng.sample(range(total), len(needles)))
    fill, pins = iter(filler), iter(needles)
    return [next(pins) if i in places else next(fill) for i in range(total)]


def _topics() -> tuple[str, ...]:
    from coca_eval.generation.values import word_list

    return word_list("nouns")
