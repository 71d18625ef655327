"""How close a long prefill comes to the machine's fp32 matmul rate, per length, and how close it could.

One forward of SmolLM2-135M's shape (random weights, float32, SDPA, the decoder's own prefill call:
a buffered cache, logits for the last position only) is timed at each length, FLOPs counted as the
decoder counts them (:class:`~coca_eval.backends.prefix_route.PrefillCost`: the linear layers plus the
causal kernel's lower triangle). A profiled forward splits the time between the matrix products of
the linear layers, the attention kernel and everything else (norms, rotary, SwiGLU, residuals), so the
report can say what rate the forward would reach if the linear layers ran at the machine's matmul rate
and everything else were free: the ceiling the attention kernel leaves.

    nice python benchmarks/prefill_rate_bench.py [--lengths 2048,8192,16384] [--report FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import DynamicCache

from coca_eval.backends.kv_cache import buffered_cache
from coca_eval.backends.prefix_route import PrefillCost
from coca_eval.cli import keep_freed_memory
from coca_eval.models.layer_cache import cache_keyword

ROOT = Path(__file__).resolve().parent.parent
SMOLLM2 = dict(
    hidden_size=576, num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536,
    num_hidden_layers=30, vocab_size=49152, tie_word_embeddings=True, rope_theta=100000.0,
)  # fmt: skip
LINEAR_OPS = ("aten::mm", "aten::addmm")
ATTENTION_OPS = ("aten::_scaled_dot_product_flash_attention_for_cpu",)
TARGET = 0.85  # of the matmul rate


def machine_speed():
    """``scripts/machine_speed.py`` (the CI's machine line), loaded from its file."""
    spec = importlib.util.spec_from_file_location("machine_speed", ROOT / "scripts" / "machine_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exp_rate(seconds: float = 2.0) -> float:
    """Exponentials per second (float32, this process's threads): the softmax's work that FLOPs omit."""
    x = torch.randn(1024, 8192)
    out = torch.empty_like(x)
    best, stop = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < stop:
        start = time.perf_counter()
        torch.exp(x, out=out)
        best = max(best, x.numel() / (time.perf_counter() - start))
    return best


def model_of(length: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(**SMOLLM2, max_position_embeddings=max(length, 8192))
    config._attn_implementation = "sdpa"
    return LlamaForCausalLM(config).eval()


@torch.inference_mode()
def prefill(model, ids: torch.Tensor) -> None:
    cache = buffered_cache(model) or DynamicCache()
    model(input_ids=ids, use_cache=True, logits_to_keep=1, **{cache_keyword(model): cache})


def timed(model, ids: torch.Tensor, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        prefill(model, ids)
        best = min(best, time.perf_counter() - start)
    return best


def split(model, ids: torch.Tensor) -> dict[str, float]:
    """Seconds of one profiled forward in the linear layers' products, the attention kernel, the rest."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        prefill(model, ids)
    events = profile.key_averages()
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    linear = sum(e.self_cpu_time_total for e in events if e.key in LINEAR_OPS) / 1e6
    attention = sum(e.self_cpu_time_total for e in events if e.key in ATTENTION_OPS) / 1e6
    return {"linear": linear, "attention": attention, "rest": total - linear - attention}


def measure(length: int, rate: float, exps_per_second: float) -> dict:
    model = model_of(length)
    cost = PrefillCost.of(model)
    ids = torch.randint(0, SMOLLM2["vocab_size"], (1, length))  # (1, n)
    prefill(model, ids[:, :512])  # allocator and kernels warmed
    seconds = timed(model, ids, 2 if length <= 8192 else 1)
    parts = split(model, ids)
    linear_flops, attention_flops = cost.per_token * length, cost.per_pair * length * (length + 1) / 2
    flops = linear_flops + attention_flops
    best_case = linear_flops / (rate * 1e9) + parts["attention"]
    exps = SMOLLM2["num_hidden_layers"] * SMOLLM2["num_attention_heads"] * length * (length + 1) / 2
    exp_seconds = exps / exps_per_second
    floor = flops / (rate * 1e9) + exp_seconds
    return {
        "length": length,
        "tflop": (linear_flops / 1e12, attention_flops / 1e12),
        "seconds": seconds,
        "share": flops / seconds / 1e9 / rate,
        "linear_rate": linear_flops / parts["linear"] / 1e9,
        "attention_rate": attention_flops / parts["attention"] / 1e9,
        "parts": parts,
        "ceiling": flops / best_case / 1e9 / rate,
        "floor": flops / floor / 1e9 / rate,
        "attention_needed": attention_flops / (flops / (TARGET * rate) - linear_flops / rate),  # GFLOP/s
        "products_needed": products_needed(flops, attention_flops, parts["linear"] + exp_seconds, rate),
    }


def products_needed(flops: float, attention_flops: float, spent: float, rate: float) -> float:
    """GFLOP/s the attention's matrix products would need for the forward to reach :data:`TARGET` of
    ``rate`` once ``spent`` seconds (the linear layers as measured, the exponentials) are paid;
    infinite where nothing is left."""
    left = flops / (TARGET * rate * 1e9) - spent
    return attention_flops / left / 1e9 if left > 0 else float("inf")


def report(rows: list[dict], rate: float, exps: float, kept: bool, machine: str, loads) -> list[str]:
    lengths = [str(r["length"]) for r in rows]
    lines = [
        "# Prefill FLOP rate against the machine's fp32 matmul rate, per length",
        "",
        f"Machine: {machine}, {os.cpu_count()} cores, torch {torch.__version__} with "
        f"{torch.get_num_threads()} threads; fp32 matmul (1024 x 1024 products, best over 2 s): "
        f"**{rate:.0f} GFLOP/s**. Load average "
        f"before -> after: {loads[0]:.2f} -> {loads[1]:.2f}. float32 `exp`: {exps / 1e9:.1f} G/s.",
        f"Command: `python benchmarks/prefill_rate_bench.py --lengths {','.join(lengths)}`."
        " SmolLM2-135M's shape (30 layers, 576 wide, 9 query / 3 key-value heads), random weights, float32, "
        "SDPA, the decoder's prefill call (buffered cache, last position's logits); FLOPs by `PrefillCost` "
        "(linear layers + the causal lower triangle). Forward: best of 2 (one from 16k). Freed memory kept "
        f"for the next tensors as a `coca-eval` process keeps it: {'yes' if kept else 'no'}.",
        "",
        "| tokens | TFLOP linear + attention | forward s | GFLOP/s | of matmul | linear GFLOP/s "
        "| attention GFLOP/s | s linear / attention / rest | ceiling | attention needed for 85 % | bound "
        "| products needed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        parts = r["parts"]
        lines.append(
            f"| {r['length']} | {r['tflop'][0]:.2f} + {r['tflop'][1]:.2f} | {r['seconds']:.2f} "
            f"| {r['share'] * rate:.0f} | {r['share']:.0%} | {r['linear_rate']:.0f} "
            f"| {r['attention_rate']:.0f} "
            f"| {parts['linear']:.2f} / {parts['attention']:.2f} / {parts['rest']:.2f} | {r['ceiling']:.0%} "
            f"| {r['attention_needed']:.0f} GFLOP/s | {r['floor']:.0%} | {r['products_needed']:.0f} GFLOP/s |"
        )
    lines += [
        "",
        "*ceiling*: the rate a forward would reach with its linear layers at the matmul rate and norms, "
        "rotary, SwiGLU and residuals free, the attention kernel as measured. *attention needed*: the rate "
        "torch's CPU attention kernel (which also computes the softmax's exponentials, not counted as "
        f"FLOPs) would need for the whole forward to reach {TARGET:.0%} of the matmul rate. *bound*: the "
        "rate with every FLOP (attention's included) at the matmul rate and nothing else but the softmax's "
        "exponentials (one per query-key pair of the lower triangle, per head and layer) at the measured "
        "`exp` rate: no exact float32 kernel on this machine can pass it. *products needed*: with the linear "
        "layers as fast as measured here and the exponentials at the `exp` rate, the rate attention's two "
        f"matrix products alone would need for {TARGET:.0%}; above the matmul rate, no attention kernel "
        "can give the forward that share while the linear layers run at the speed measured.",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="2048,8192,16384")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    kept = keep_freed_memory()  # as a coca-eval process does
    speed = machine_speed()
    load_before = os.getloadavg()[0]
    rate, exps = speed.matmul_gflops(), exp_rate()
    rows = []
    for length in (int(n) for n in args.lengths.split(",")):
        rows.append(measure(length, rate, exps))
        print(f"{length}: {rows[-1]['seconds']:.2f} s, {rows[-1]['share']:.0%} of matmul", flush=True)
    lines = report(rows, rate, exps, kept, speed.cpu_name(), (load_before, os.getloadavg()[0]))
    print("\n".join(lines))
    if args.report:
        args.report.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
