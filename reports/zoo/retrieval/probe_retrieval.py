"""Can a trained zoo model still be taught passkey retrieval, and how fast? (the retrieval probes)

Starts from a shipped zoo model and trains it further on rows that carry far more retrieval signal
than the recipe's tenth of passkey rows, measuring every 100 steps:

- ``digits``: on 32 fixed landmark examples of 200-500 tokens, how often each of the five answer
  digits is the model's top prediction when the answer so far is given (teacher forcing); chance is
  about 0.1. ``bare`` reads the example from position 0, as the harness asks; ``eos`` puts the
  ``<|endoftext|>`` separator the training rows use in front of it.
- exact retrieval (greedy, 7 new tokens) on 20 harness prompts of 512 tokens.

Rows: ``frac`` of them landmark passkey rows, each packed with examples from position 0 (no separator
in front of the first, so it reads exactly like the harness's prompt); with ``pairs`` > 0 that share
of rows is instead digit strings (5-12 digits) each written twice with 1-``gap`` tokens of book text
between, the copy-by-content skill retrieval needs, at a varying distance.

    python reports/zoo/retrieval/probe_retrieval.py steps=600                       # passkey rows only
    python reports/zoo/retrieval/probe_retrieval.py steps=800 pairs=0.5 lr=2e-3     # half digit pairs
"""

from __future__ import annotations

import random
import sys
import time

import torch
from transformers import AutoModelForCausalLM

from coca_eval.models.registration import register_model_types
from coca_eval.passkey.prompts import KEY_RANGE, PasskeySample
from coca_eval.zoo.data import TrainingStream
from coca_eval.zoo.datasets import ZooData
from coca_eval.zoo.hardware import use_bf16_autocast
from coca_eval.zoo.recipe import Architecture, Recipe
from coca_eval.zoo.shipped import shipped_dir
from coca_eval.zoo.train import make_optimizer, train_step

ARGS = dict(a.split("=", 1) for a in sys.argv[1:])
WIDTH = 513  # a 512-token row plus its shifted target


def passkey_row(stream: TrainingStream, rng: random.Random, width: int) -> torch.Tensor:
    """Landmark examples back to back from position 0, book text after the last one."""
    examples: list[int] = []
    while width - len(examples) > stream.shortest:
        longest = min(512, width - len(examples) - 1)
        examples += stream._passkey_example(rng, rng.randint(stream.shortest, longest))
    return torch.cat([torch.tensor(examples), stream._window(rng, width - len(examples))])  # (width,)


def digit_pair_row(stream: TrainingStream, digit_ids: list[int], rng: random.Random) -> torch.Tensor:
    """Digit strings each written twice, book text between the two and after the second."""
    out: list[int] = []
    gap = int(ARGS.get("gap", 64))
    while len(out) < WIDTH:
        seg = [rng.choice(digit_ids) for _ in range(rng.randint(5, 12))]
        out += seg + stream._window(rng, rng.randint(1, gap)).tolist() + seg
        out += stream._window(rng, rng.randint(1, 8)).tolist()
    return torch.tensor(out[:WIDTH])  # (width,)


def batch(stream: TrainingStream, digit_ids: list[int], step: int) -> torch.Tensor:
    rows = stream.batch(step)  # (8, width)
    rng = random.Random(f"mix:{step}")
    for i in range(len(rows)):
        if rng.random() < float(ARGS.get("pairs", 0)):
            rows[i] = digit_pair_row(stream, digit_ids, rng)
    return rows


@torch.no_grad()
def digit_accuracy(model, stream: TrainingStream, eos: bool, n: int = 32) -> list[float]:
    """Teacher-forced top-1 accuracy of each of the five answer digits."""
    rng, hits = random.Random("digits"), torch.zeros(5)
    for _ in range(n):
        example = stream._passkey_example(rng, rng.randint(200, 500))
        ids = torch.tensor([([stream.eos] if eos else []) + example], device=model.device)  # (1, n)
        pred = model(ids).logits[0].argmax(-1)  # (n,)
        hits += (pred[:-1][-7:-2] == ids[0, 1:][-7:-2]).float()  # the five digits before ". <eos>"
    return [round(x, 2) for x in (hits / n).tolist()]


@torch.no_grad()
def retrieval(model, stream: TrainingStream, tok, length: int = 512, n: int = 20, eos: bool = False) -> float:
    """Exact greedy retrieval on ``n`` prompts of ``length`` tokens; ``eos`` makes the first of them the
    ``<|endoftext|>`` every training example followed (``--bos always`` in the harness)."""
    ok = 0
    for i in range(n):
        rng = random.Random(f"probe:{length}:{i}")
        key = rng.randint(*KEY_RANGE)
        prompt = stream.builder.build(PasskeySample(i, key, (i + rng.random()) / n), length - eos).ids
        prompt = [stream.eos] * eos + prompt
        ids = torch.tensor([prompt], device=model.device)  # (1, length)
        out = model.generate(ids, max_new_tokens=7, do_sample=False, pad_token_id=stream.eos)
        ok += str(key) in tok.decode(out[0, ids.shape[1] :])
    return ok / n


def with_shape(arch: Architecture) -> Architecture:
    """``layers=`` and ``hidden=`` on the command line give another shape (heads of 32, SwiGLU 3x wide)."""
    if "layers" not in ARGS and "hidden" not in ARGS:
        return arch
    hidden = int(ARGS.get("hidden", arch.hidden_size))
    layers = int(ARGS.get("layers", arch.num_hidden_layers))
    shape = {"num_hidden_layers": layers, "hidden_size": hidden, "intermediate_size": 3 * hidden}
    return arch.model_copy(update=shape | {"num_attention_heads": hidden // 32})


def report(model, stream, tok, step: int) -> None:
    model.eval()
    bare, eos = digit_accuracy(model, stream, False), digit_accuracy(model, stream, True)
    exact = retrieval(model, stream, tok) if step else float("nan")
    print(f"{step} digits bare {bare} eos {eos} exact@512 {exact}", flush=True)
    model.train()


def main() -> None:
    register_model_types()  # an ``init=`` zoo model may be a CoCA, ALiBi or p-RoPE one
    torch.manual_seed(0)
    steps, lr = int(ARGS.get("steps", 600)), float(ARGS.get("lr", 1e-3))
    data = ZooData.load(512)
    tok = data.tokenizer
    init = ARGS.get("init", "zoo-rope")
    model = AutoModelForCausalLM.from_pretrained(str(shipped_dir(init) or init), dtype=torch.float32)
    recipe = Recipe(passkey_fraction=float(ARGS.get("frac", 1.0)), steps=steps)
    stream = TrainingStream(recipe, tok, data.train_texts)
    stream._passkey_row = lambda rng, width: passkey_row(stream, rng, width)
    digit_ids = [tok.convert_tokens_to_ids(str(d)) for d in range(10)]
    report(model, stream, tok, 0)
    optimizer, began = make_optimizer(model, recipe), time.time()
    bf16 = use_bf16_autocast(True, torch.device("cpu"))
    for step in range(1, steps + 1):
        loss = train_step(model, optimizer, batch(stream, digit_ids, step - 1), lr, 1.0, bf16)
        if step % 20 == 0:
            print("step", step, round(loss, 3), round(time.time() - began), flush=True)
        if step % 100 == 0:
            report(model, stream, tok, step)


if __name__ == "__main__":
    main()
