"""Prefill through the shared-prefix route against whole rows, measured and as the route's estimate says.

The hf backend reuses a cached common prefix only for rows where
``coca_eval.backends.prefix_route`` estimates that it saves FLOPs. This benchmark checks that
estimate against the clock: for prompts of each length sharing a prefix of each share of it, it
times, side by side in one process, the prefill of ``--rows`` rows

* ``whole``: every row prefilled from empty, as many per forward as the decoder's
  ``PREFILL_TOKENS`` allow (the causal kernel);
* ``route``: the group's longest prefix prefilled once, then each row cropped back to its prefix and
  its rest prefilled past it in ``REST_CHUNK``-token forwards (the masked kernel), stacked for decoding.

Decoding is left out: both routes decode the same stacked rows. The model has SmolLM2-135M's shape
with random weights (prefill time does not depend on the weights), float32. One rate (seconds per
TFLOP, the median of measured / estimated over every timing) turns the estimate into seconds; the
report says, per length and share, which route the clock prefers and which the estimate chose.

    python benchmarks/prefix_route_bench.py --lengths 1024,4096,8192 --shares 0.1,0.3,0.5,0.7,0.9 \\
        --rows 4 --report reports/benchmarks/prefix_route.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generation_bench import BareBackend, build_model, machine  # noqa: E402

from coca_eval.backends.hf_generation import GreedyDecoder  # noqa: E402
from coca_eval.backends.prefix_route import REST_CHUNK, PrefillCost, rows_reusing  # noqa: E402


def prompts_sharing(vocab: int, rows: int, length: int, share: float) -> tuple[list[list[int]], list[int]]:
    """``rows`` prompts of ``length`` random tokens whose first ``share`` of tokens are common."""
    generator = torch.Generator().manual_seed(length)
    common = int(length * share)
    base = torch.randint(3, vocab, (length,), generator=generator).tolist()
    rests = torch.randint(3, vocab, (rows, length - common), generator=generator).tolist()
    return [base[:common] + rest for rest in rests], [common] * rows


def prefill_whole(decoder: GreedyDecoder, prompts) -> None:
    decoder.prefill(prompts, [0] * len(prompts), reusing=[False] * len(prompts))


def prefill_route(decoder: GreedyDecoder, prompts, prefixes) -> None:
    decoder.prefill(prompts, prefixes, reusing=[True] * len(prompts))


def seconds(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(args, decoder: GreedyDecoder, cost: PrefillCost, vocab: int) -> list[dict]:
    rows = []
    for length in args.lengths:
        whole_prompts, _ = prompts_sharing(vocab, args.rows, length, 0.0)
        whole_s = seconds(lambda p=whole_prompts: prefill_whole(decoder, p))
        for share in args.shares:
            prompts, prefixes = prompts_sharing(vocab, args.rows, length, share)
            route_s = seconds(lambda p=prompts, q=prefixes: prefill_route(decoder, p, q))
            chosen = rows_reusing(cost, [length] * args.rows, prefixes, [0] * args.rows)
            row = dict(
                length=length, share=share, rows=args.rows, whole_s=round(whole_s, 2),
                route_s=round(route_s, 2), whole_tflop=cost.whole(length) * args.rows / 1e12,
                route_tflop=(cost.whole(prefixes[0]) + cost.rest(length, prefixes[0]) * args.rows) / 1e12,
                estimate_takes_route=all(chosen),
            )  # fmt: skip
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def report(rows: list[dict], args) -> str:
    rate = statistics.median(
        [r[f"{side}_s"] / r[f"{side}_tflop"] for r in rows for side in ("whole", "route")]
    )
    lines = [
        "# Shared-prefix route vs whole rows: prefill time, measured and estimated",
        "",
        f"Machine: {machine('cpu')}. Command: `python benchmarks/prefix_route_bench.py {args.command}`.",
        f"SmolLM2-135M's shape, random weights, float32, SDPA; {args.rows} rows per group, prefill only "
        f"(decoding is the same in both routes); rests in forwards of {REST_CHUNK} tokens. One rate, "
        f"{rate:.2f} s per TFLOP (median of measured / estimated), turns the estimate into seconds.",
        "",
        "| length | prefix share | whole s/row | route s/row | route/whole measured | "
        "route/whole estimated | faster by the clock | estimate takes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    agree = 0
    for r in rows:
        measured = r["route_s"] / r["whole_s"]
        estimated = r["route_tflop"] / r["whole_tflop"]
        clock = "route" if measured < 1 else "whole"
        takes = "route" if r["estimate_takes_route"] else "whole"
        agree += clock == takes
        lines.append(
            f"| {r['length']} | {r['share']:.0%} | {r['whole_s'] / r['rows']:.2f} | "
            f"{r['route_s'] / r['rows']:.2f} | {measured:.2f} | {estimated:.2f} | {clock} | {takes} |"
        )
    errors = [
        abs(r[f"{side}_s"] / (rate * r[f"{side}_tflop"]) - 1) for r in rows for side in ("whole", "route")
    ]
    lines += [
        "",
        f"The estimate picks the route the clock prefers in {agree} of {len(rows)} cases; estimated "
        f"seconds are within {max(errors):.0%} of measured ones (median {statistics.median(errors):.0%}).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--lengths", default="1024,4096,8192")
    parser.add_argument("--shares", default="0.1,0.3,0.5,0.7,0.9")
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args()
    args.command = " ".join(sys.argv[1:])
    args.lengths = [int(n) for n in args.lengths.split(",")]
    args.shares = [float(s) for s in args.shares.split(",")]
    model = build_model("smollm2", "cpu", torch.float32, max(args.lengths) + 256)
    decoder = GreedyDecoder(BareBackend(model, "cpu"), 1, batch_size=args.rows)
    vocab = model.config.vocab_size
    prefill_whole(decoder, prompts_sharing(vocab, 1, 256, 0.0)[0])  # warm-up
    text = report(measure(args, decoder, PrefillCost.of(model), vocab), args)
    print(text)
    if args.report:
        args.report.write_text(text)


if __name__ == "__main__":
    main()
