"""CoCA on a GPU: forward time and peak memory of vanilla attention, the CoCA fast path (torch ops, and
the fused Triton transform where Triton is there) and the reference contraction, bf16, side by side.

Part 1, one attention layer shaped like LLaMA-7B's (hidden 4096, 32 heads x 128, no GQA), batch 1,
for each SDPA kernel asked for (flash, memory-efficient): N = 2k .. 64k. The reference contraction
(eager: N x N scores and probabilities per head) is attempted at every N until it runs out of memory;
after that it is skipped and the table shows the memory it would have needed.
Part 2, a whole 1B-shaped model (LLaMA-3.2-1B's shapes: 16 layers, hidden 2048, 32 heads x 64, 8 KV
heads, SwiGLU 8192, vocab 128256, tied head; random weights), one forward with ``logits_to_keep=1``.

Target (issue 17): CoCA <= 1.05x vanilla time and <= 1.02x vanilla peak memory at every N >= 4k.

    python benchmarks/coca_bench.py --device cuda [--lengths 2048,...,65536] [--report PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

import torch
from bench_models import attention_layers, whole_models
from cuda_timing import DEVICE, GIB, device_line, interleaved, ratio, require_cuda

from coca_eval.kernels import triton_available, use_coca_kernel

ROOT = Path(__file__).resolve().parent.parent
LAYER_7B = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=32, intermediate_size=11008)
MODEL_1B = dict(
    hidden_size=2048, num_attention_heads=32, num_key_value_heads=8, intermediate_size=8192,
    num_hidden_layers=16, vocab_size=128256, tie_word_embeddings=True,
)  # fmt: skip
TARGET_TIME, TARGET_MEMORY, TARGET_FROM = 1.05, 1.02, 4096


def sdpa_backend(name: str):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    kernels = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    return sdpa_kernel([kernels[name]]) if name in kernels else contextlib.nullcontext()


def with_kernel(fn, kernel: str, backend: str):
    """``fn`` run with the CoCA transform ``kernel`` and the SDPA ``backend`` selected."""

    def run():
        with use_coca_kernel(kernel), sdpa_backend(backend):
            return fn()

    return run


def coca_kernels() -> list[str]:
    return ["torch", "triton"] if triton_available() else ["torch"]


def layer_reference_bytes(n: int, heads: int) -> int:
    """The eager contraction's N x N tensors in one layer: bf16 scores, fp32 softmax, bf16 probabilities
    and the bf16 causal mask it builds."""
    return heads * n * n * (2 + 4 + 2) + n * n * 2


@torch.inference_mode()
def bench_layers(lengths: list[int], backends: list[str], rounds: int) -> list[dict]:
    with torch.device(DEVICE):
        layers, rotary = attention_layers(LAYER_7B)
    layers = {name: m.to(torch.bfloat16) for name, m in layers.items()}
    rows, reference_failed = [], False
    for backend in backends:
        reference_failed = False
        for n in lengths:
            x = torch.randn(1, n, LAYER_7B["hidden_size"], device=DEVICE, dtype=torch.bfloat16)  # (1, n, H)
            cos_sin = rotary(x, torch.arange(n, device=DEVICE)[None])  # (1, n, d) each
            call = lambda m, x=x, cs=cos_sin: lambda: m(x, position_embeddings=cs, attention_mask=None)  # noqa: E731
            runs = {"vanilla": with_kernel(call(layers["vanilla"]), "torch", backend)}
            runs.update({f"coca/{k}": with_kernel(call(layers["coca"]), k, backend) for k in coca_kernels()})
            if not reference_failed:
                runs["reference"] = with_kernel(call(layers["reference"]), "torch", backend)
            result = interleaved(runs, rounds)
            reference_failed = reference_failed or result.get("reference", {}).get("status", "ok") != "ok"
            rows.append({"part": "layer", "sdpa": backend, "n": n, **result})
            print(json.dumps(rows[-1]), flush=True)
            del x, cos_sin
            torch.cuda.empty_cache()
    return rows


@torch.inference_mode()
def bench_whole(
    lengths: list[int], backend: str, rounds: int, reference_upto: int, layers: int
) -> list[dict]:
    shapes = {**MODEL_1B, "num_hidden_layers": layers}
    with torch.device(DEVICE):
        models = {k: m.to(torch.bfloat16) for k, m in whole_models(shapes, max(lengths)).items()}
    params = sum(p.numel() for p in models["coca"].parameters())
    rows = []
    for n in lengths:
        tokens = torch.randint(0, MODEL_1B["vocab_size"], (1, n), device=DEVICE)  # (1, n)

        def forward(model, implementation, tokens=tokens):
            def run():
                model.config._attn_implementation = implementation
                return model(tokens, logits_to_keep=1, use_cache=False)

            return run

        runs = {"vanilla": with_kernel(forward(models["vanilla"], "sdpa"), "torch", backend)}
        runs.update(
            {f"coca/{k}": with_kernel(forward(models["coca"], "sdpa"), k, backend) for k in coca_kernels()}
        )
        if n <= reference_upto:
            runs["reference"] = with_kernel(forward(models["coca"], "eager"), "torch", backend)
        result = interleaved(runs, rounds)
        models["coca"].config._attn_implementation = "sdpa"
        rows.append({"part": "model", "params": params, "sdpa": backend, "n": n, **result})
        print(json.dumps(rows[-1]), flush=True)
        torch.cuda.empty_cache()
    return rows


def cell(result: dict, name: str) -> tuple[str, str]:
    r = result.get(name)
    if r is None:
        return "skipped", "n/a"
    if r["status"] != "ok":
        return r["status"].split(":")[0], "n/a"
    return f"{r['ms']:,.2f}", f"{r['peak'] / 2**20:,.0f}"


def render_rows(rows: list[dict], heads: int | None) -> list[str]:
    names = ["vanilla"] + [f"coca/{k}" for k in coca_kernels()] + ["reference"]
    head = "| SDPA | N | " + " | ".join(f"{n} ms | {n} MiB" for n in names)
    head += " | " + " | ".join(f"{n} time / vanilla | {n} memory / vanilla" for n in names[1:-1]) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(names) + 2 * (len(names) - 2))]
    for row in rows:
        cells = [c for n in names for c in cell(row, n)]
        if heads is not None and "reference" not in row:
            cells[-2] = f"skipped (needs {layer_reference_bytes(row['n'], heads) / GIB:,.0f} GiB)"
        for n in names[1:-1]:
            t, m = ratio(row, n, "vanilla", "ms"), ratio(row, n, "vanilla", "peak")
            cells += [f"{t:.3f}x" if t else "n/a", f"{m:.3f}x" if m else "n/a"]
        lines.append(f"| {row['sdpa']} | {row['n']} | " + " | ".join(cells) + " |")
    return lines


def verdict(rows: list[dict]) -> list[str]:
    lines = []
    for kernel in coca_kernels():
        name = f"coca/{kernel}"
        long_rows = [r for r in rows if r["n"] >= TARGET_FROM]
        times = [ratio(r, name, "vanilla", "ms") for r in long_rows]
        memory = [ratio(r, name, "vanilla", "peak") for r in long_rows]
        if not times:
            lines.append(f"- {name}: no N >= {TARGET_FROM} measured.")
            continue
        if None in times + memory:
            lines.append(f"- {name}: incomplete (a method failed at some N >= {TARGET_FROM}).")
            continue
        ok = max(times) <= TARGET_TIME and max(memory) <= TARGET_MEMORY
        lines.append(
            f"- {name}: worst time ratio {max(times):.3f}x, worst memory ratio {max(memory):.3f}x at "
            f"N >= {TARGET_FROM}: target **{'met' if ok else 'NOT met'}**."
        )
    return lines


def render(layer_rows: list[dict], model_rows: list[dict], args) -> str:
    params = model_rows[0]["params"] / 1e9 if model_rows else 0
    return "\n".join(
        [
            "# coca_bench --device cuda: vanilla attention vs CoCA fast path vs the reference contraction",
            "",
            f"{device_line()}; bf16; Triton {'available' if triton_available() else 'not installed'}. "
            f"Times: median of {args.rounds} interleaved rounds (CUDA events, one warm-up each); peak: "
            "`torch.cuda.max_memory_allocated` during one more call, above what was allocated before it. "
            "`coca/torch` is the CoCA fast path with the torch ops, `coca/triton` with the fused Triton "
            "transform (the default on CUDA; `COCA_EVAL_COCA_KERNEL=torch` turns it off).",
            "",
            f"Target: CoCA <= {TARGET_TIME}x vanilla time and <= {TARGET_MEMORY}x memory at "
            f"N >= {TARGET_FROM}.",
            "",
            "## One attention layer, 7B-shaped (hidden 4096, 32 heads x 128, batch 1)",
            "",
            *render_rows(layer_rows, LAYER_7B["num_attention_heads"]),
            "",
            *verdict(layer_rows),
            "",
            f"## Whole model, 1B-shaped ({args.model_layers} layers, {params:.2f}B parameters, random "
            "weights; one forward, `logits_to_keep=1`)",
            "",
            *render_rows(model_rows, None),
            "",
            *verdict(model_rows),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", choices=["cuda"], default="cuda")
    parser.add_argument("--lengths", default="2048,4096,8192,16384,32768,65536")
    parser.add_argument("--sdpa", default="flash,efficient", help="SDPA kernels for the layer part")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reference-upto", type=int, default=8192, help="longest whole-model eager run")
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument("--model-layers", type=int, default=MODEL_1B["num_hidden_layers"])
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "benchmarks" / "coca_bench_cuda.md")
    args = parser.parse_args()
    require_cuda("coca_bench --device cuda")
    lengths, backends = [int(n) for n in args.lengths.split(",")], args.sdpa.split(",")
    layer_rows = bench_layers(lengths, backends, args.rounds)
    model_rows = (
        []
        if args.skip_model
        else bench_whole(lengths, backends[0], args.rounds, args.reference_upto, args.model_layers)
    )
    report = render(layer_rows, model_rows, args)
    print(report)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(report)
    args.report.with_suffix(".json").write_text(json.dumps(layer_rows + model_rows, indent=1))


if __name__ == "__main__":
    main()
