"""Training batches: windows of the training books mixed with synthetic passkey-retrieval examples.

Each batch is a pure function of ``(seed, step)``, so a resumed run sees exactly the batches an
uninterrupted one would, and every zoo model sees the same token stream in the same order.

The mix: a fraction ``passkey_fraction`` of the rows are packed with passkey examples (the harness's
own ``landmark`` prompt, answered by `` {key}.`` and ``<|endoftext|>``), each at most the training
context long: the first of a uniformly drawn length, the next ones drawn from what is left of the
row, and book text before them where no further example fits. Packing puts several answers in a row
for more gradient on the skill than one example per row gave (which left the models answering the
prompt's form with a fixed number); at recipe v4's budget they still did not learn
to retrieve, while recipe v5's batches of 64 rows taught every from-scratch model to retrieve inside
its window (``docs/zoo.md``, "History of the recipe"; the passkey tables in ``reports/zoo/README.md``).
The other rows are plain book windows. All of it lies inside the trained window, which is what
Tables 1 and 2 test beyond.

Two more kinds of rows exist for variants (the shared recipe uses neither): a fraction
``copy_fraction`` of copy rows (a segment of 16-128 uniformly random tokens repeated back to back to
the row's end), and ``copy_warmup_steps`` first steps of rows repeating one 64-token random segment.
Random segments can only be predicted by copying, the in-context skill (induction) real language
models get much of their context gain from; at the zoo's size they taught a copy at a fixed offset
but no copying by content within the budget (``docs/zoo.md``, "History of the recipe", v2).
"""

from __future__ import annotations

import random

import torch

from coca_eval.errors import CocaEvalError
from coca_eval.passkey.prompts import KEY_RANGE, PasskeySample, PromptBuilder
from coca_eval.passkey.templates import TEMPLATES
from coca_eval.zoo.recipe import Recipe

SHORTEST_FILLER = 8  # filler tokens around the key line in the shortest example
COPY_SEGMENT = (16, 128)  # shortest and longest repeated segment of a copy row
WARMUP_SEGMENT = 64  # the warm-up's copy rows all repeat segments of this length
TEMPLATE = "landmark"


class TrainingStream:
    """The books as one token stream (documents joined by EOS) plus the passkey prompt builder."""

    def __init__(self, recipe: Recipe, tokenizer, texts: list[str]) -> None:
        self.recipe = recipe
        self.eos = tokenizer.eos_token_id
        specials = set(tokenizer.all_special_ids)
        self.ordinary = [i for i in range(len(tokenizer)) if i not in specials]  # for random copy segments
        ids: list[int] = []
        for text in texts:
            ids += tokenizer(text)["input_ids"] + [self.eos]
        self.tokens = torch.tensor(ids, dtype=torch.long)  # (T,)
        self.encode = lambda s: tokenizer(s, add_special_tokens=False)["input_ids"]
        self.builder = PromptBuilder(TEMPLATES.get(TEMPLATE), self.encode, None)
        b = self.builder
        overhead = len(b.intro) + len(b.key_tokens(KEY_RANGE[1])) + len(b.question)
        self.shortest = overhead + len(self.encode(f" {KEY_RANGE[1]}.")) + 1 + SHORTEST_FILLER
        if recipe.passkey_fraction > 0 and self.shortest > recipe.context:
            raise CocaEvalError(
                f"a {recipe.context}-token context cannot hold a passkey example ({self.shortest}+ tokens)"
            )

    def batch(self, step: int) -> torch.Tensor:
        """Rows of ``context + 1`` tokens (inputs and shifted targets) for optimiser step ``step``."""
        rng = random.Random(f"coca-eval-zoo:{self.recipe.seed}:{step}")
        width = self.recipe.context + 1
        if step < self.recipe.copy_warmup_steps:
            rows = [self._copy_row(rng, width, WARMUP_SEGMENT) for _ in range(self.recipe.batch_size)]
        else:
            rows = [self._row(rng, width) for _ in range(self.recipe.batch_size)]
        return torch.stack(rows)  # (b, context + 1)

    def _row(self, rng: random.Random, width: int) -> torch.Tensor:
        draw = rng.random()
        if draw < self.recipe.passkey_fraction:
            return self._passkey_row(rng, width)
        if draw < self.recipe.passkey_fraction + self.recipe.copy_fraction:
            return self._copy_row(rng, width)
        return self._window(rng, width)

    def _passkey_row(self, rng: random.Random, width: int) -> torch.Tensor:
        examples: list[int] = []  # each example is preceded by an EOS
        while width - len(examples) > self.shortest:
            longest = min(self.recipe.context, width - len(examples) - 1)
            examples += [self.eos] + self._passkey_example(rng, rng.randint(self.shortest, longest))
        head = self._window(rng, width - len(examples))
        return torch.cat([head, torch.tensor(examples)])  # (width,)

    def _copy_row(self, rng: random.Random, width: int, size: int | None = None) -> torch.Tensor:
        """One segment of random tokens (``size`` long, else of a random length) repeated back to back
        until the row is full."""
        size = size or rng.randint(*COPY_SEGMENT)
        segment = torch.tensor(rng.choices(self.ordinary, k=size))  # (size,)
        return segment.repeat(width // len(segment) + 1)[:width]  # (width,)

    def _window(self, rng: random.Random, n: int) -> torch.Tensor:
        start = rng.randrange(0, len(self.tokens) - n)
        return self.tokens[start : start + n]  # (n,)

    def _passkey_example(self, rng: random.Random, length: int) -> list[int]:
        """A prompt of ``length`` tokens in total once the answer and EOS are appended."""
        key = rng.randint(*KEY_RANGE)
        answer = self.encode(f" {key}.") + [self.eos]
        prompt = self.builder.build(PasskeySample(0, key, rng.random()), length - len(answer))
        return prompt.ids + answer


def heldout_windows(tokenizer, texts: list[str], count: int, context: int) -> torch.Tensor:
    """``count`` evenly spaced windows of ``context + 1`` tokens from the held-out books, for a
    training-time held-out loss that every zoo model measures on the same tokens."""
    per_text = max(1, count // len(texts))
    rows = []
    for text in texts:
        ids = torch.tensor(tokenizer(text)["input_ids"], dtype=torch.long)  # (T,)
        starts = torch.linspace(0, len(ids) - context - 1, per_text).long()
        rows += [ids[s : s + context + 1] for s in starts.tolist()]
    return torch.stack(rows)  # (count, context + 1)
