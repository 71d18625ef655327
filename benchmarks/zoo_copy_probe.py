"""How fast the zoo architecture learns to copy by content, on rows of nothing but copy data.

Each row is pairs of random segments, each segment repeated once right after itself. Every
``--every`` steps the script prints the loss on the first and on the second reading of fresh pairs:
the second falls below the first only when the model copies by content (a single repeat allows no
fixed-offset shortcut). This produced ``reports/zoo/recipe-v2/probes/copy_*pairs_only*.log``:

    P="python benchmarks/zoo_copy_probe.py"
    $P --alphabet tokens --segment 8,64 --steps 600             # copy_pairs_only.log
    $P --alphabet digits --segment 5,16 --steps 600             # copy_digit_pairs_only.log
    $P --alphabet digits --segment 5,16 --steps 250 --batch 32  # copy_digit_pairs_only_batch32.log
    $P --alphabet digits --segment 5,16 --steps 1500            # copy_digit_pairs_only_1500.log

(zoo-rope architecture and optimiser, peak rate 2e-3 after 20 warm-up steps, then constant; the
digit ids are those of the zoo tokenizer, digits 0-9.)
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coca_eval.zoo.build import build_model  # noqa: E402
from coca_eval.zoo.catalog import zoo_spec  # noqa: E402
from coca_eval.zoo.train import make_optimizer, train_step  # noqa: E402

DIGIT_IDS = list(range(17, 27))  # "0".."9" in the zoo tokenizer (after the specials and byte tokens)
WARMUP = 20
PROBE_SEGMENT = {"digits": 12, "tokens": 40}


def pair_row(rng: random.Random, alphabet: list[int], segment: tuple[int, int], width: int) -> list[int]:
    out: list[int] = []
    while len(out) < width:
        piece = [rng.choice(alphabet) for _ in range(rng.randint(*segment))]
        out += piece + piece
    return out[:width]


@torch.no_grad()
def reading_losses(model, alphabet: list[int], size: int, gen: torch.Generator) -> tuple[float, float]:
    """Mean loss on the first and on the second reading of 8 fresh segments of ``size`` tokens."""
    model.eval()
    picks = torch.randint(0, len(alphabet), (8, size), generator=gen)  # (8, size)
    segments = torch.tensor(alphabet)[picks]
    rows = torch.cat([segments, segments], dim=1)  # (8, 2 * size)
    logits = model(input_ids=rows).logits[:, :-1]  # (8, 2 * size - 1, vocab)
    nll = F.cross_entropy(logits.flatten(0, 1), rows[:, 1:].flatten(), reduction="none").view(8, -1)
    model.train()
    return nll[:, : size - 1].mean().item(), nll[:, size:].mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alphabet", choices=["digits", "tokens"], default="digits")
    parser.add_argument("--segment", default="5,16", help="shortest,longest segment")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--vocab", type=int, default=None, help="vocabulary size (default: zoo-rope's)")
    parser.add_argument("--bf16", action="store_true", help="train under bf16 autocast")
    args = parser.parse_args()
    spec = zoo_spec("zoo-rope")
    if args.vocab:
        architecture = spec.architecture.model_copy(update={"vocab_size": args.vocab})
        spec = spec.model_copy(update={"architecture": architecture})
    vocab, width = spec.architecture.vocab_size, spec.recipe.context + 1
    alphabet = DIGIT_IDS if args.alphabet == "digits" else list(range(2, vocab))
    probe_alphabet = DIGIT_IDS if args.alphabet == "digits" else list(range(10, vocab))
    segment = tuple(int(n) for n in args.segment.split(","))
    torch.manual_seed(0)
    model = build_model(spec, eos_id=0, pad_id=0)
    model.train()
    optimizer = make_optimizer(model, spec.recipe)
    rng, gen, began = random.Random(0), torch.Generator().manual_seed(1), time.perf_counter()
    for step in range(args.steps + 1):
        if step % args.every == 0:
            first, repeat = reading_losses(model, probe_alphabet, PROBE_SEGMENT[args.alphabet], gen)
            print(
                f"{step} first {first:.2f} repeat {repeat:.2f} {time.perf_counter() - began:.0f}s", flush=True
            )
        if step < args.steps:
            rows = torch.tensor([pair_row(rng, alphabet, segment, width) for _ in range(args.batch)])
            lr = args.lr * min(1.0, step / WARMUP)
            train_step(model, optimizer, rows, lr, spec.recipe.grad_clip, args.bf16)


if __name__ == "__main__":
    main()
