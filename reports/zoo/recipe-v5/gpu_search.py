"""When does passkey retrieval form in a zoo model, given more tokens than a CPU session can give?

Trains the zoo's shared architecture (RoPE) from fresh weights on the package's own training stream
(``TrainingStream``: book windows, packed landmark passkey rows, optional copy rows) with the recipe's
schedule, overriding recipe fields from the command line, and every ``every`` steps prints one JSON
line: the step, seconds, loss, the teacher-forced top-1 rate of the five answer digits on 32 fixed
landmark examples of 200-500 tokens (chance about 0.1), and exact retrieval (greedy) on 20 harness
prompts of 512 tokens. ``deadline`` (seconds) ends training early, so a run that is too slow still
says how far it got; the model is then saved to ``out`` for the harness to read.

    python reports/zoo/recipe-v5/gpu_search.py batch_size=64 steps=3000 passkey_fraction=0.1 \\
        out=/tmp/A device=cuda deadline=420

``gpu_search.sh`` runs a set of these side by side on one GPU and reads each result with
``coca-eval ppl`` and ``coca-eval passkey``.
"""

from __future__ import annotations

import json
import random
import sys
import time

import torch

from coca_eval.passkey.prompts import KEY_RANGE, PasskeySample
from coca_eval.zoo.build import build_model
from coca_eval.zoo.data import TrainingStream
from coca_eval.zoo.datasets import ZooData
from coca_eval.zoo.hardware import use_bf16_autocast
from coca_eval.zoo.recipe import Architecture, Recipe, ZooSpec, lr_at
from coca_eval.zoo.train import make_optimizer, resolve_device, train_step

ARGS = dict(a.split("=", 1) for a in sys.argv[1:])
RECIPE_FIELDS = {
    "batch_size": int,
    "steps": int,
    "passkey_fraction": float,
    "copy_fraction": float,
    "peak_lr": float,
    "seed": int,
    "copy_warmup_steps": int,
    "final_lr_ratio": float,
}


@torch.no_grad()
def answer_digits(model, stream: TrainingStream, device, n: int = 32) -> float:
    """Teacher-forced top-1 rate of the five answer digits (the tokens before ``.`` and EOS)."""
    rng, hits = random.Random("digits"), 0.0
    for _ in range(n):
        ids = torch.tensor([stream._passkey_example(rng, rng.randint(200, 500))], device=device)  # (1, n)
        pred = model(ids).logits[0].argmax(-1)  # (n,)
        hits += (pred[:-1][-7:-2] == ids[0, 1:][-7:-2]).float().mean().item()
    return round(hits / n, 3)


@torch.no_grad()
def exact(model, stream: TrainingStream, tok, device, length: int = 512, n: int = 20) -> float:
    ok = 0
    for i in range(n):
        rng = random.Random(f"probe:{length}:{i}")
        key = rng.randint(*KEY_RANGE)
        prompt = stream.builder.build(PasskeySample(i, key, (i + rng.random()) / n), length).ids
        ids = torch.tensor([prompt], device=device)  # (1, length)
        out = model.generate(ids, max_new_tokens=7, do_sample=False, pad_token_id=stream.eos)
        ok += str(key) in tok.decode(out[0, ids.shape[1] :])
    return ok / n


def spec_from_args() -> ZooSpec:
    recipe = Recipe(**{k: cast(ARGS[k]) for k, cast in RECIPE_FIELDS.items() if k in ARGS})
    arch = Architecture()
    if "layers" in ARGS or "hidden" in ARGS:  # another shape: heads of 32, SwiGLU 3x wide
        hidden = int(ARGS.get("hidden", arch.hidden_size))
        arch = arch.model_copy(
            update={
                "num_hidden_layers": int(ARGS.get("layers", arch.num_hidden_layers)),
                "hidden_size": hidden,
                "intermediate_size": 3 * hidden,
                "num_attention_heads": hidden // 32,
            }
        )
    return ZooSpec(
        name="search",
        label="search",
        description="retrieval search",
        position="rope",
        recipe=recipe,
        architecture=arch,
    )


def main() -> None:
    spec = spec_from_args()
    recipe, device = spec.recipe, resolve_device(ARGS.get("device", "cpu"))
    deadline, every = float(ARGS.get("deadline", 1e9)), int(ARGS.get("every", 250))
    data = ZooData.load(spec.architecture.vocab_size)
    tok = data.tokenizer
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
                "digits": answer_digits(model, stream, device),
                "exact512": exact(model, stream, tok, device),
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
