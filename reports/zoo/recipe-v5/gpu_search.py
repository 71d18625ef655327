"""When does passkey retrieval form in a zoo model, given more tokens than a CPU session can give?

Trains the zoo's shared architecture (RoPE unless ``position=`` says otherwise) from fresh weights
on the package's own training stream
(``TrainingStream``: book windows, packed landmark passkey rows, optional copy rows) with the recipe's
schedule, overriding recipe fields from the command line, and every ``every`` steps prints one JSON
line: the step, seconds, loss, the teacher-forced top-1 rate of the five answer digits on 32 fixed
landmark examples of 200-500 tokens (the mean of ``probe_retrieval.digit_accuracy``'s five rates;
chance about 0.1), and exact retrieval (greedy) on 20 harness prompts of 512 tokens
(``probe_retrieval.retrieval``), each read cold (``digits``, ``exact512``: nothing in front, as the
recipe-v5 search read them) and after ``<|endoftext|>`` as in training (``digits_eos``,
``exact512_eos``). ``deadline`` (seconds) ends training early, so a run that is too slow still
says how far it got; the model is then saved to ``out`` for the harness to read.

    python reports/zoo/recipe-v5/gpu_search.py batch_size=64 steps=3000 passkey_fraction=0.1 \\
        out=/tmp/A device=cuda deadline=420

``short_first=FROM:FRACTION`` trains on short passkey examples first (``ShortFirstStream``).
``gpu_search.sh`` runs a set of these side by side on one GPU and reads each result with
``coca-eval ppl`` and ``coca-eval passkey``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
from probe_retrieval import ARGS, digit_accuracy, retrieval, with_shape  # noqa: E402

from coca_eval.zoo.build import build_model  # noqa: E402
from coca_eval.zoo.data import TrainingStream  # noqa: E402
from coca_eval.zoo.datasets import ZooData  # noqa: E402
from coca_eval.zoo.hardware import use_bf16_autocast  # noqa: E402
from coca_eval.zoo.recipe import Architecture, Recipe, ZooSpec, lr_at  # noqa: E402
from coca_eval.zoo.train import make_optimizer, resolve_device, train_step  # noqa: E402


class ShortFirstStream(TrainingStream):
    """``short_first=FROM:FRACTION``: passkey examples are at most FROM tokens long at step 0, the cap
    growing linearly to the full context by FRACTION of the steps (short distances first, several
    examples per row); the rest of the stream is the package's."""

    def __init__(self, recipe: Recipe, tokenizer, texts: list[str], short_first: str) -> None:
        super().__init__(recipe, tokenizer, texts)
        start, fraction = short_first.split(":")
        self.start, self.ramp = int(start), max(1.0, float(fraction) * recipe.steps)
        self.cap, self.capping = recipe.context, False

    def batch(self, step: int) -> torch.Tensor:
        grown = self.start + (self.recipe.context - self.start) * min(1.0, step / self.ramp)
        self.cap = max(self.shortest, round(grown))
        return super().batch(step)  # (b, context + 1)

    def _passkey_row(self, rng, width: int) -> torch.Tensor:
        self.capping = True  # only training rows are capped, not the probes' examples
        try:
            return super()._passkey_row(rng, width)  # (width,)
        finally:
            self.capping = False

    def _passkey_example(self, rng, length: int) -> list[int]:
        return super()._passkey_example(rng, min(length, self.cap) if self.capping else length)


def spec_from_args() -> ZooSpec:
    """Recipe fields given as ``name=value`` (pydantic reads the strings), the rest of the recipe shared;
    ``position=`` and ``coca_variant=`` pick the scheme (RoPE unless told)."""
    recipe = Recipe(**{k: v for k, v in ARGS.items() if k in Recipe.model_fields})
    return ZooSpec(
        name="search",
        label="search",
        description="retrieval search",
        position=ARGS.get("position", "rope"),
        coca_variant=ARGS.get("coca_variant", "slack"),
        recipe=recipe,
        architecture=with_shape(Architecture()),
    )


def main() -> None:
    spec = spec_from_args()
    recipe, device = spec.recipe, resolve_device(ARGS.get("device", "cpu"))
    deadline, every = float(ARGS.get("deadline", 1e9)), int(ARGS.get("every", 250))
    data = ZooData.load(spec.architecture.vocab_size, recipe.extra_books)
    tok = data.tokenizer
    if "short_first" in ARGS:
        stream = ShortFirstStream(recipe, tok, data.train_texts, ARGS["short_first"])
    else:
        stream = TrainingStream(recipe, tok, data.train_texts)
    torch.manual_seed(recipe.seed)
    model = build_model(spec, tok.eos_token_id, tok.pad_token_id).to(device)
    optimizer, began = make_optimizer(model, recipe), time.time()
    bf16 = use_bf16_autocast(recipe.bf16_autocast, device)
    print(json.dumps({"args": ARGS, "recipe": recipe.model_dump(), "bf16": bf16}), flush=True)
    done = 0
    for step in range(recipe.steps):
        rows = stream.batch(step).to(device)  # (b, context + 1)
        loss = train_step(model, optimizer, rows, lr_at(recipe, step), recipe.grad_clip, bf16)
        done = step + 1
        out_of_time = time.time() - began > deadline
        if done % every == 0 or done == recipe.steps or out_of_time:
            model.eval()
            line = {
                "step": done,
                "s": round(time.time() - began),
                "loss": round(loss, 3),
                "digits": round(sum(digit_accuracy(model, stream, False)) / 5, 3),
                "digits_eos": round(sum(digit_accuracy(model, stream, True)) / 5, 3),
                "exact512": retrieval(model, stream, tok),
                "exact512_eos": retrieval(model, stream, tok, eos=True),
            }
            print(json.dumps(line), flush=True)
            model.train()
        if out_of_time:
            print(json.dumps({"stopped_at": done, "of": recipe.steps}), flush=True)
            break
    if "out" in ARGS:
        model.save_pretrained(ARGS["out"])
        tok.save_pretrained(ARGS["out"])


if __name__ == "__main__":
    main()
