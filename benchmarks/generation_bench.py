"""Batched greedy decoding against one row at a time and against transformers' padded ``generate``.

Every prompt of a cell has the same length, so the hf backend decodes ``B`` rows together without a pad
token (``coca_eval.backends.hf_generation``). This benchmark times, side by side in one process and on
one device, the same work done three ways:

* ``ours B=1``: ``GreedyDecoder`` one row at a time (what every generation task did before batching);
* ``ours B=n``: the same decoder, ``n`` rows at a time (``auto`` is what ``--batch-size auto`` picks);
* ``generate B=n``: ``model.generate`` on ``n`` rows at once, greedy, the route lm-eval's hf model
  takes with ``--batch_size n`` (no padding is needed at one length, so none is added).

Work: ``--prompts`` prompts of L random tokens (a fixed seed), each decoded for exactly ``--new-tokens``
tokens (EOS is disabled, so every route does the same work), on a model with random weights of a named
shape (``smollm2``: SmolLM2-135M's; ``1b``: LLaMA-3.2-1B's) or a model directory (``--model``). Rounds
alternate the routes' order; the median round is reported. Reported per route: seconds, generated tokens
per second, prefill tokens per second, peak memory above the weights (CUDA: allocator peak; CPU: none),
and how many rows give exactly the tokens of ``ours B=1``.

    python benchmarks/generation_bench.py --device cpu --shape smollm2 --lengths 1024 --prompts 16
    python benchmarks/generation_bench.py --device cuda --shape smollm2,1b --lengths 1024,4096 \\
        --prompts 64 --batches 1,8,32,auto --report reports/gpu/generation_bench.md
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from coca_eval.backends.batch_size import auto_batch_size
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts

SHAPES = {
    "smollm2": dict(
        hidden_size=576, num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536,
        num_hidden_layers=30, vocab_size=49152, tie_word_embeddings=True, rope_theta=100000.0,
    ),
    "1b": dict(
        hidden_size=2048, num_attention_heads=32, num_key_value_heads=8, intermediate_size=8192,
        num_hidden_layers=16, vocab_size=128256, tie_word_embeddings=True, rope_theta=500000.0,
    ),
}  # fmt: skip


class _NoTokenizer:
    eos_token_id = None

    def decode(self, tokens, skip_special_tokens=True) -> str:
        return ""


class BareBackend:
    """What ``GreedyDecoder`` reads of an hf backend, around a bare model (no load probes, no EOS)."""

    def __init__(self, model, device: str) -> None:
        self.model, self.device = model, torch.device(device)
        self.tokenizer = _NoTokenizer()
        self.has_dynamic_rope = False

    def reset_dynamic_rope(self) -> None:
        pass


def build_model(shape: str, device: str, dtype: torch.dtype, positions: int):
    torch.manual_seed(0)
    config = LlamaConfig(
        **SHAPES[shape], max_position_embeddings=positions, eos_token_id=None, bos_token_id=None
    )
    config._attn_implementation = "sdpa"
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype).eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    return model


def prompts_for(vocab: int, count: int, length: int) -> list[list[int]]:
    generator = torch.Generator().manual_seed(length)
    return torch.randint(3, vocab, (count, length), generator=generator).tolist()


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def ours(backend, prompts, new_tokens: int, batch: int) -> list[list[int]]:
    answers: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, new_tokens, batch_size=batch)
    decode_prompts(decoder, prompts, [0] * len(prompts), answers.__setitem__, prefix_reuse=False)
    return [answers[i] for i in range(len(prompts))]


@torch.inference_mode()
def generate(model, prompts, new_tokens: int, batch: int, device: str) -> list[list[int]]:
    out = []
    for lo in range(0, len(prompts), batch):
        ids = torch.tensor(prompts[lo : lo + batch], device=device)  # (b, L)
        tokens = model.generate(
            ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens, min_new_tokens=new_tokens,
            do_sample=False, pad_token_id=0,
        )  # fmt: skip
        out += tokens[:, ids.shape[1] :].tolist()  # (b, new)
    return out


def warm_up(route) -> None:
    """One untimed call of a route: on a GPU the first call at a new batch shape pays for kernel selection
    and allocator growth (over a second on an H200), which a single timed round would charge to it."""
    route()


def timed(fn, device: str) -> tuple[float, int, list[list[int]]]:
    """Seconds, peak bytes above what was allocated before, and the result of one call."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated() if device.startswith("cuda") else 0
    start = time.perf_counter()
    result = fn()
    sync(device)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() - before if device.startswith("cuda") else 0
    return seconds, peak, result


def run_case(args, shape: str, length: int) -> list[dict]:
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    model = build_model(shape, args.device, dtype, length + args.new_tokens + 256)
    backend = BareBackend(model, args.device)
    prompts = prompts_for(SHAPES[shape]["vocab_size"], args.prompts, length)
    auto = auto_batch_size(model, length, args.new_tokens)
    batches = [auto if b == "auto" else int(b) for b in args.batches.split(",")]
    routes = {}
    for b in dict.fromkeys([1, *batches]):
        name = f"ours B={b}" + (" (auto)" if b == auto and "auto" in args.batches else "")
        routes[name] = lambda b=b: ours(backend, prompts, args.new_tokens, b)
    for b in filter(None, args.generate_batches.split(",")):  # "" times ours alone
        b = auto if b == "auto" else int(b)
        routes[f"generate B={b}"] = lambda b=b: generate(model, prompts, args.new_tokens, b, args.device)
    for warm in routes.values():  # warm-up at every route's own shapes: kernels, cuBLAS plans, allocator
        warm_up(warm)
    times: dict[str, list[float]] = {name: [] for name in routes}
    peaks, outputs = {}, {}
    names = list(routes)
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            seconds, peak, result = timed(routes[name], args.device)
            times[name].append(seconds)
            peaks[name], outputs[name] = max(peak, peaks.get(name, 0)), result
    reference = outputs["ours B=1"]
    base = statistics.median(times["ours B=1"])
    rows = []
    for name in names:
        seconds = statistics.median(times[name])
        row = dict(
            shape=shape, length=length, prompts=args.prompts, new_tokens=args.new_tokens, route=name,
            seconds=round(seconds, 3), speedup_vs_b1=round(base / seconds, 2),
            generated_per_s=round(args.prompts * args.new_tokens / seconds, 1),
            peak_mib=round(peaks[name] / 2**20, 1),
            rows_equal_b1=sum(a == b for a, b in zip(outputs[name], reference, strict=True)),
        )  # fmt: skip
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.device.startswith("cuda"):
        torch.cuda.empty_cache()
    return rows


def machine(device: str) -> str:
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        name = torch.cuda.get_device_name(0)
        return f"{name} ({props.total_memory / 2**30:.0f} GiB), torch {torch.__version__}"
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    names = [line.split(":", 1)[1].strip() for line in flags.splitlines() if line.startswith("model name")]
    name = names[0] if names else platform.processor() or "CPU"
    threads = torch.get_num_threads()
    return f"{name} ({isa}), {threads} threads, torch {torch.__version__}"


def report(rows: list[dict], args) -> str:
    import pandas as pd

    frame = pd.DataFrame(rows)
    lines = [
        "# Batched greedy decoding: ours at B rows vs one row vs transformers `generate`",
        "",
        f"Machine: {machine(args.device)}. Command: `python benchmarks/generation_bench.py {args.command}`.",
        f"{args.prompts} prompts of L random tokens, {args.new_tokens} new tokens each (EOS off), random "
        f"weights, {'bf16' if args.device.startswith('cuda') else 'fp32'}, SDPA; median of {args.rounds} "
        "alternating rounds. `rows_equal_b1`: rows whose tokens equal ours at B=1.",
        "",
        frame.to_markdown(index=False),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--shape", default="smollm2", help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--lengths", default="1024")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--batches", default="4,16,auto")
    parser.add_argument("--generate-batches", default="auto", help='"" leaves generate out')
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    import sys

    args.command = " ".join(sys.argv[1:])
    rows = [
        row
        for shape in args.shape.split(",")
        for length in map(int, args.lengths.split(","))
        for row in run_case(args, shape, length)
    ]
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(report(rows, args), encoding="utf-8")
        args.report.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
