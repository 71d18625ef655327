"""Does a copy curriculum teach a zoo model passkey retrieval from scratch, inside the 30-minute budget?

Trains the zoo's shared architecture (``Architecture()``, RoPE) from fresh weights with the recipe's
learning-rate schedule over ``steps`` steps, on rows drawn as follows:

- the first ``warm`` steps: nothing but digit-pair rows (``probe_retrieval.digit_pair_row``: digit
  strings of 5-12 written twice with 1-``gap`` tokens of book text between), the copy-by-content
  skill retrieval needs; with ``kind=repeats`` instead the recipe's copy rows (a random segment of
  16-128 tokens of the whole vocabulary repeated to the row's end: the period differs by row, so it
  is found by content, and most of a row is copyable);
- then the recipe's mix (``frac`` passkey rows, laid out from position 0 as the harness asks, the
  rest book windows) with a share ``pairs`` of the rows replaced by digit-pair rows.

Every 100 steps it prints the teacher-forced top-1 rate of the five answer digits on landmark
examples (chance about 0.1), of the second writing's digits on fresh digit-pair rows and of the
later readings of a repeated random segment; every 500
steps and at the end the exact retrieval rate on 20 harness prompts of 512 tokens. The trained model
is saved to ``out`` (a ``from_pretrained`` directory) so that ``coca-eval ppl`` can read its bar;
``stop`` ends the run after that many steps of the ``steps``-step schedule; ``layers`` and
``hidden`` give another shape (heads of 32).

    python reports/zoo/retrieval/probe_curriculum.py steps=2900 warm=600 pairs=0.2 out=/tmp/cur

The committed logs beside it came from (``nohup nice``, two threads, nothing else running):

    probe_curriculum.py steps=2900 warm=800 pairs=0.2 stop=1000 out=/tmp/cur1     # curriculum_warm800.log
    probe_curriculum.py steps=2900 warm=800 kind=repeats stop=600                 # ..._repeats_lr4e-3.log
    probe_curriculum.py steps=2900 warm=800 kind=repeats lr=1e-3 stop=500         # ..._repeats_lr1e-3.log
    probe_curriculum.py steps=2900 warm=800 kind=repeats lr=1e-3 layers=2 hidden=256 stop=400
                                                                                 # ..._repeats_2x256.log

(the lr 4e-3 run was stopped by hand after step 380).
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from probe_retrieval import (  # noqa: E402
    ARGS,
    digit_accuracy,
    digit_pair_row,
    passkey_row,
    retrieval,
    with_shape,
)

from coca_eval.zoo.build import build_model  # noqa: E402
from coca_eval.zoo.data import TrainingStream  # noqa: E402
from coca_eval.zoo.datasets import ZooData  # noqa: E402
from coca_eval.zoo.hardware import use_bf16_autocast  # noqa: E402
from coca_eval.zoo.recipe import Recipe, ZooSpec, lr_at  # noqa: E402
from coca_eval.zoo.train import make_optimizer, train_step  # noqa: E402


def curriculum_batch(stream: TrainingStream, digit_ids: list[int], step: int, warm: int, pairs: float):
    rows = stream.batch(step)  # (8, 513)
    rng = random.Random(f"curriculum:{step}")
    for i in range(len(rows)):
        if step < warm and ARGS.get("kind") == "repeats":
            rows[i] = stream._copy_row(rng, rows.shape[1])  # a random segment of 16-128 tokens, repeated
        elif step < warm or rng.random() < pairs:
            rows[i] = digit_pair_row(stream, digit_ids, rng)
    return rows  # (8, 513)


@torch.no_grad()
def repeat_accuracy(model, stream: TrainingStream, n: int = 8) -> float:
    """Top-1 rate on the third and later readings of a random 40-token segment repeated to the end of
    the row (copying by content: the period is not fixed across rows)."""
    rng = random.Random("repeat-probe")
    rows = torch.stack([stream._copy_row(rng, 200, 40) for _ in range(n)])  # (n, 200)
    pred = model(rows).logits.argmax(-1)  # (n, 200)
    return round((pred[:, 79:-1] == rows[:, 80:]).float().mean().item(), 2)


@torch.no_grad()
def pair_accuracy(model, stream: TrainingStream, digit_ids: list[int], n: int = 16) -> float:
    """Top-1 rate on the digits of each segment's second writing (the copyable ones)."""
    rng, hits, total = random.Random("pair-probe"), 0, 0
    for _ in range(n):
        seg = [rng.choice(digit_ids) for _ in range(8)]
        gap = stream._window(rng, rng.randint(16, 200)).tolist()
        ids = torch.tensor([stream._window(rng, 32).tolist() + seg + gap + seg])  # (1, L)
        pred = model(ids).logits[0].argmax(-1)  # (L,)
        hits += (pred[-9:-1] == ids[0, -8:]).sum().item()  # each second-writing digit from its left
        total += 8
    return round(hits / total, 2)


def report(model, stream, tok, digit_ids, step: int, exact: bool) -> None:
    model.eval()
    digits, pairs = digit_accuracy(model, stream, False), pair_accuracy(model, stream, digit_ids)
    line = f"{step} digits {digits} pairs {pairs} repeats {repeat_accuracy(model, stream)}"
    if exact:
        line += f" exact@512 {retrieval(model, stream, tok)}"
    print(line, flush=True)
    model.train()


def main() -> None:
    torch.set_num_threads(2)
    steps, warm, pairs = int(ARGS.get("steps", 2900)), int(ARGS.get("warm", 0)), float(ARGS.get("pairs", 0))
    frac, lr = float(ARGS.get("frac", 0.1)), float(ARGS.get("lr", 4e-3))
    recipe = Recipe(steps=steps, passkey_fraction=frac, peak_lr=lr)
    spec = ZooSpec(name="probe", label="probe", description="curriculum", position="rope", recipe=recipe)
    spec = spec.model_copy(update={"architecture": with_shape(spec.architecture)})
    bf16 = use_bf16_autocast(recipe.bf16_autocast, torch.device("cpu"))
    data = ZooData.load(spec.architecture.vocab_size)
    tok = data.tokenizer
    stream = TrainingStream(recipe, tok, data.train_texts)
    stream._passkey_row = lambda rng, width: passkey_row(stream, rng, width)
    digit_ids = [tok.convert_tokens_to_ids(str(d)) for d in range(10)]
    torch.manual_seed(recipe.seed)
    model = build_model(spec, tok.eos_token_id, tok.pad_token_id)
    optimizer, began = make_optimizer(model, recipe), time.time()
    for step in range(int(ARGS.get("stop", steps))):  # stop=N: the first N steps of the schedule
        rows = curriculum_batch(stream, digit_ids, step, warm, pairs)
        loss = train_step(model, optimizer, rows, lr_at(recipe, step), recipe.grad_clip, bf16)
        done = step + 1
        if done % 20 == 0:
            print("step", done, round(loss, 3), round(time.time() - began), flush=True)
        if done % 100 == 0 or done == steps:
            report(model, stream, tok, digit_ids, done, done % 500 == 0 or done == steps)
    print(f"trained {done} steps in {time.time() - began:.0f} s", flush=True)
    if "out" in ARGS:
        model.save_pretrained(ARGS["out"])
        tok.save_pretrained(ARGS["out"])


if __name__ == "__main__":
    main()
