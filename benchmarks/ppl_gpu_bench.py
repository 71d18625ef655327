"""Perplexity throughput on a GPU: the hf ppl path against a bare forward and against the roofline.

A 1B-shaped model with random weights (LLaMA-3.2-1B's shapes, see ``coca_bench_cuda.MODEL_1B``; plain
LLaMA and LLaMA-CoCA), bf16, SDPA, on a random document of ``windows`` strided windows of length L
(stride S = 512), L = 4k .. 32k:

* ours: ``score_tokens`` through ``HFBackend`` (what ``coca-eval ppl --device cuda`` runs: split LM head
  in chunks, last layer on the scored rows only where the probe allows it);
* bare: ``model(window, logits_to_keep=S + 1)``, nothing else.

Every window but the first (which scores all its tokens) is timed, interleaved (ours, bare; order
alternating), with CUDA events. Throughput = scored tokens / s (S per window) and window tokens / s
(L per window). MFU = model FLOPs of the window ÷ (peak bf16 FLOP/s × time), with model FLOPs =
2 · (non-embedding parameters) · L + 2 · layers · L² · hidden (causal attention: QKᵀ and PV, half the
matrix) + 2 · vocab · hidden · S (the head on the scored rows); the same FLOPs are charged to both, so
the path that skips work shows it as a higher MFU. ``--peak-tflops`` is the GPU's dense bf16 peak: 989
for an H100 SXM and an H200 (spec sheet); about 790 was measured for large matmuls on this workplace's.

    python benchmarks/ppl_gpu_bench.py [--lengths 4096,8192,16384,32768] [--peak-tflops 989]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import torch
from bench_models import whole_models
from coca_bench_cuda import MODEL_1B
from cuda_timing import DEVICE, cuda_ms, cuda_peak, device_line, require_cuda

from coca_eval.backends.hf import HFBackend
from coca_eval.ppl.engine import score_tokens
from coca_eval.ppl.windows import plan_windows

ROOT = Path(__file__).resolve().parent.parent
FLOPS_NOTE = (
    "MFU = model FLOPs ÷ (peak × time), model FLOPs per window = 2 · (non-embedding parameters) · L "
    "+ 2 · layers · L² · hidden (causal attention) + 2 · vocab · hidden · S (head on the scored rows), "
    "charged alike to both paths (ours skips part of the last layer, so it may exceed bare)."
)


def window_flops(shapes: dict, length: int, scored: int) -> float:
    hidden, layers, vocab = shapes["hidden_size"], shapes["num_hidden_layers"], shapes["vocab_size"]
    kv = hidden * shapes["num_key_value_heads"] // shapes["num_attention_heads"]
    per_layer = hidden * (2 * hidden + 2 * kv) + 3 * hidden * shapes["intermediate_size"]  # attn + MLP
    return (
        2.0 * layers * per_layer * length + 2.0 * layers * length**2 * hidden + 2.0 * vocab * hidden * scored
    )


def backend_for(model: torch.nn.Module) -> HFBackend:
    """The scoring backend around an in-memory model (no tokenizer is needed to score ids)."""
    return HFBackend(model, SimpleNamespace(bos_token_id=None), "random-1b", None)


@torch.inference_mode()
def bench_length(backend: HFBackend, length: int, stride: int, windows: int) -> dict:
    total = length + (windows - 1) * stride
    ids = torch.randint(0, backend.model.config.vocab_size, (total,)).tolist()
    plan = plan_windows(total, length, stride, "never")
    steady = plan[1:]  # every later window scores exactly its last `stride` tokens
    runs = {
        "ours": lambda w: score_tokens(backend, ids, [w]),
        "bare": lambda w: backend.model(
            torch.tensor([ids[w.start : w.end]], device=backend.device), logits_to_keep=w.n_scored + 1
        ),
    }
    for fn in runs.values():
        fn(steady[0])  # warm-up
    seconds = {name: 0.0 for name in runs}
    for i, window in enumerate(steady):
        for name in list(runs)[i % 2 :] + list(runs)[: i % 2]:
            seconds[name] += cuda_ms(lambda name=name, window=window: runs[name](window)) / 1e3
    peaks = {name: cuda_peak(lambda fn=fn: fn(steady[0])) for name, fn in runs.items()}
    return {
        "length": length,
        "windows": len(steady),
        "scored": stride * len(steady),
        "s": seconds,
        "peak": peaks,
    }


def render_row(arch: str, row: dict, shapes: dict, peak_flops: float) -> str:
    flops = window_flops(shapes, row["length"], row["scored"] // row["windows"]) * row["windows"]
    cells = []
    for name in ("ours", "bare"):
        s = row["s"][name]
        cells += [
            f"{row['scored'] / s:,.0f}",
            f"{row['length'] * row['windows'] / s:,.0f}",
            f"{100 * flops / (peak_flops * s):.1f} %",
            f"{row['peak'][name] / 2**20:,.0f}",
        ]
    ratio = row["s"]["ours"] / row["s"]["bare"]
    return f"| {arch} | {row['length']} | " + " | ".join(cells) + f" | {ratio:.3f}x |"


def render(results: dict, args, params: dict) -> str:
    shapes = {**MODEL_1B, "num_hidden_layers": args.model_layers}
    lines = [
        f"# ppl_gpu_bench: hf ppl path vs bare forward vs roofline (S = {args.stride}, bf16)",
        "",
        f"{device_line()}; peak bf16 taken as {args.peak_tflops:g} TFLOP/s; SDPA; random 1B-shaped models "
        f"({', '.join(f'{a}: {p / 1e9:.2f}B parameters' for a, p in params.items())}). "
        f"{args.windows} windows per L, the first (which scores all its tokens) untimed; the rest "
        "interleaved, CUDA events.",
        "",
        "| model | L | ours scored tok/s | ours window tok/s | ours MFU | ours peak MiB | bare scored tok/s "
        "| bare window tok/s | bare MFU | bare peak MiB | ours / bare time |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arch, rows in results.items():
        lines += [render_row(arch, row, shapes, args.peak_tflops * 1e12) for row in rows]
    return "\n".join(lines + ["", FLOPS_NOTE, ""])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="4096,8192,16384,32768")
    parser.add_argument("--stride", type=int, default=512)
    parser.add_argument("--windows", type=int, default=6, help="windows per length (the first is untimed)")
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak of the GPU")
    parser.add_argument("--architectures", default="llama,coca")
    parser.add_argument("--model-layers", type=int, default=MODEL_1B["num_hidden_layers"])
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "benchmarks" / "ppl_gpu_bench.md")
    args = parser.parse_args()
    require_cuda("ppl_gpu_bench")
    lengths = [int(n) for n in args.lengths.split(",")]
    shapes = {**MODEL_1B, "num_hidden_layers": args.model_layers}
    results, params = {}, {}
    for arch in args.architectures.split(","):
        with torch.device(DEVICE):
            model = whole_models(shapes, max(lengths))["vanilla" if arch == "llama" else "coca"]
        model = model.to(torch.bfloat16)
        params[arch] = sum(p.numel() for p in model.parameters())
        backend = backend_for(model)
        print(f"{arch}: fast paths {sorted(backend.fast_paths)}", flush=True)
        results[arch] = []
        for length in lengths:
            results[arch].append(bench_length(backend, length, args.stride, args.windows))
            print(json.dumps({"arch": arch, **results[arch][-1]}), flush=True)
        del model, backend
        torch.cuda.empty_cache()
    report = render(results, args, params)
    print(report)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(report)
    args.report.with_suffix(".json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
