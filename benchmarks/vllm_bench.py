"""Passkey throughput: hf vs vllm, and CoCA vs plain LLaMA of the same shape under vLLM, in one run.

1. hf vs vllm: the preset model (SmolLM2-135M, float32), ``coca-eval passkey``'s own generation paths
   (hf: shared-prefix KV reuse + early stop; vllm: one batch with automatic prefix caching, cut by the
   same stop rule). Outputs must be identical; the ratio is vllm / hf samples per second.
2. CoCA vs plain under vLLM: random-weight models with the preset's shape (a plain LLaMA and a
   slack CoCA one), the same passkey prompts, a fixed 16 greedy tokens each (EOS ignored) so both do
   the same work; the ratio is CoCA / plain throughput (target >= 0.9x).

Engine start-up is timed separately and left out of throughput. Every timed vLLM pass starts from an
empty prefix cache. Timings on a shared VM wander by tens of percent from one minute to the next, so
hf and vllm passes are interleaved and the fastest of each counts, and CoCA vs plain is measured in
pairs: both engines stay loaded, each in its own process, and take turns (half the pairs with each
engine process started first); the estimate is the median of the per-pair ratios, with its quartiles.

    python benchmarks/vllm_bench.py [--lengths 512,1024] [--samples 10] [--pairs 12]
                                    [--device cpu|cuda] [--report PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Both backends share this process: without this, vLLM's CPU start-up drops torch to one thread for
# everything that runs after it, hf included.
os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count()))

import torch  # noqa: E402

from coca_eval.backends.options import EngineOptions, load_backend  # noqa: E402
from coca_eval.methods import make_method  # noqa: E402
from coca_eval.passkey.answer import (
    passkey_stop,  # noqa: E402
    score_output,  # noqa: E402
)
from coca_eval.passkey.params import make_passkey_params  # noqa: E402
from coca_eval.passkey.task import draw_samples_for, prompt_builder  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIXED_NEW_TOKENS = 16
WORKER_TAG = "WORKER-SECONDS "
CPU_NOTE = (
    "\nNo GPU was available for this run, so there are no GPU numbers here; on a GPU machine run "
    "`python benchmarks/vllm_bench.py --device cuda` (CUDA vLLM, where CoCA runs on the registered "
    "`COCA` attention backend).\n"
)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def passkey_prompts(backend, length: int, samples: int, max_new: int):
    params = make_passkey_params({"lengths": [length], "samples": samples, "max_new_tokens": max_new})
    builder = prompt_builder(params, backend)
    drawn = draw_samples_for(params, length)
    return [builder.build(s, length) for s in drawn], [s.key for s in drawn]


def generate(backend, prompts, max_new: int) -> list[list[int]]:
    if hasattr(backend, "engine"):
        backend.engine(len(prompts[0].ids)).reset_prefix_cache()
    found: dict[int, list[int]] = {}
    backend.generate_greedy(
        [p.ids for p in prompts], [p.shared_prefix for p in prompts], passkey_stop(max_new), found.__setitem__
    )
    return [found[i] for i in range(len(prompts))]


def hf_vs_vllm(args, options: EngineOptions, longest: int) -> list[dict]:
    load = lambda name: load_backend(  # noqa: E731
        make_method(args.model, "none", None, "float32", name), args.device, None, options, longest
    )
    hf, (vl, t_load) = load("hf"), timed(lambda: load("vllm"))
    rows = []
    for length in args.lengths:
        prompts, keys = passkey_prompts(hf, length, args.samples, args.max_new_tokens)
        _, t_start = timed(lambda: vl.engine(length))  # noqa: B023
        t_hf, t_vl = [], []
        for _ in range(args.repeats):  # interleaved; the fastest of each is the least disturbed
            hf_out, seconds = timed(lambda: generate(hf, prompts, args.max_new_tokens))  # noqa: B023
            t_hf.append(seconds)
            vl_out, seconds = timed(lambda: generate(vl, prompts, args.max_new_tokens))  # noqa: B023
            t_vl.append(seconds)
        t_hf, t_vl = min(t_hf), min(t_vl)
        correct = [score_output(vl.decode(t), k)["correct"] for t, k in zip(hf_out, keys, strict=True)]
        rows.append({
            "length": length, "samples": args.samples, "hf_s": t_hf, "vllm_s": t_vl,
            "hf_samples_per_s": args.samples / t_hf, "vllm_samples_per_s": args.samples / t_vl,
            "vllm_over_hf": t_hf / t_vl, "identical_outputs": hf_out == vl_out,
            "accuracy": sum(correct) / args.samples, "engine_start_s": t_load + t_start,
        })  # fmt: skip
        print(rows[-1], flush=True)
    vl.close()
    return rows


def same_shape_models(model: str, root: Path) -> dict[str, Path]:
    """Random plain-LLaMA and CoCA (slack) checkpoints with ``model``'s shape and tokenizer."""
    from transformers import AutoConfig, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM
    from coca_eval.models.presets import resolve_model

    path, _ = resolve_model(model)
    shape = AutoConfig.from_pretrained(path).to_dict()
    shape = {
        k: v for k, v in shape.items() if k not in ("model_type", "architectures", "transformers_version")
    }
    dirs = {}
    for name, config_class, model_class in (
        ("plain", LlamaConfig, LlamaForCausalLM),
        ("coca", CocaLlamaConfig, CocaLlamaForCausalLM),
    ):
        torch.manual_seed(0)
        dirs[name] = root / name
        model_class(config_class(**shape)).save_pretrained(dirs[name])
        AutoTokenizer.from_pretrained(path).save_pretrained(dirs[name])
    return dirs


def fixed_work(backend, prompts) -> float:
    """Seconds for every prompt plus FIXED_NEW_TOKENS greedy tokens, EOS ignored, empty prefix cache."""
    from vllm import SamplingParams

    llm = backend.engine(len(prompts[0].ids))
    llm.reset_prefix_cache()
    params = SamplingParams(max_tokens=FIXED_NEW_TOKENS, temperature=0.0, ignore_eos=True, detokenize=False)
    _, seconds = timed(
        lambda: llm.generate([{"prompt_token_ids": p.ids} for p in prompts], params, use_tqdm=False)
    )
    return seconds


def worker(args) -> None:
    """One engine for one checkpoint, serving timing requests: reads a length per line on stdin, answers
    with the wall and process CPU seconds of one ``fixed_work`` pass (CPU time leaves out time the VM
    took the cores away). Idle (blocked on stdin) while the other engine runs."""
    backend = load_backend(
        make_method(str(args.worker), "none", None, "float32", "vllm"),
        args.device,
        None,
        EngineOptions(enforce_eager=None),
        max(args.lengths) + args.max_new_tokens,
    )
    prompts = {n: passkey_prompts(backend, n, args.samples, args.max_new_tokens)[0] for n in args.lengths}
    for n in args.lengths:
        fixed_work(backend, prompts[n])  # warm-up: first calls pay one-off kernel set-up
    print(WORKER_TAG + "ready", flush=True)
    for line in sys.stdin:
        cpu = time.process_time()
        wall = fixed_work(backend, prompts[int(line)])
        print(WORKER_TAG + json.dumps([wall, time.process_time() - cpu]), flush=True)
    backend.close()


class Worker:
    """A ``worker`` process, started now, asked for one timed pass at a time."""

    def __init__(self, args, checkpoint: Path) -> None:
        command = [sys.executable, __file__, "--worker", str(checkpoint), "--device", args.device]
        command += ["--lengths", ",".join(map(str, args.lengths)), "--samples", str(args.samples)]
        command += ["--max-new-tokens", str(args.max_new_tokens)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    def _answer(self) -> str:
        for line in self.process.stdout:
            if line.startswith(WORKER_TAG):
                return line[len(WORKER_TAG) :].strip()
        raise RuntimeError(f"benchmark worker exited with {self.process.wait()}")

    def wait_ready(self) -> None:
        self._answer()

    def time(self, length: int) -> tuple[float, float]:
        """(wall, CPU) seconds of one pass."""
        self.process.stdin.write(f"{length}\n")
        self.process.stdin.flush()
        wall, cpu = json.loads(self._answer())
        return wall, cpu

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def coca_vs_plain(args) -> list[dict]:
    """Paired passes: both engines stay loaded in their own processes and take turns (plain first in
    even pairs, CoCA first in odd ones), so each ratio compares two runs seconds apart and slow drifts
    of a shared machine cancel. On the 2-core CPU machine the engine process started second ran
    8-15 % slower whichever model it held, so half the pairs run with each start order. The median of
    the per-pair ratios is the estimate."""
    times: dict[int, dict[str, list]] = {n: {"plain": [], "coca": []} for n in args.lengths}
    with tempfile.TemporaryDirectory() as tmp:
        dirs = same_shape_models(args.model, Path(tmp))
        for start_order in (("plain", "coca"), ("coca", "plain")):
            workers = {name: Worker(args, dirs[name]) for name in start_order}
            for w in workers.values():
                w.wait_ready()
            for length in args.lengths:
                timed_pairs(
                    workers, length, args.pairs // 2, times[length], f"started {start_order[0]} first"
                )
            for w in workers.values():
                w.close()
    return [pair_row(args, length, times[length]["plain"], times[length]["coca"]) for length in args.lengths]


def timed_pairs(workers: dict, length: int, pairs: int, into: dict[str, list], label: str) -> None:
    for pair in range(pairs):
        for name in ("plain", "coca") if pair % 2 == 0 else ("coca", "plain"):
            into[name].append(workers[name].time(length))
        plain, coca = into["plain"][-1], into["coca"][-1]
        print(f"{length} ({label}): pair {pair + 1}/{pairs} plain {plain} s, coca {coca} s", flush=True)


def pair_row(args, length: int, plain: list, coca: list) -> dict:
    """Medians over pairs of (wall, CPU) seconds."""
    wall = sorted(p[0] / c[0] for p, c in zip(plain, coca, strict=True))
    cpu = sorted(p[1] / c[1] for p, c in zip(plain, coca, strict=True))
    row = {
        "length": length, "samples": args.samples, "pairs": len(wall),
        "plain_median_s": statistics.median(p[0] for p in plain),
        "coca_median_s": statistics.median(c[0] for c in coca),
        "coca_over_plain": statistics.median(wall),
        "ratio_q1": wall[len(wall) // 4], "ratio_q3": wall[(3 * len(wall)) // 4],
        "cpu_time_ratio": statistics.median(cpu),
    }  # fmt: skip
    print(row, flush=True)
    return row


def table(rows: list[dict]) -> str:
    head = "| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]) + "\n"
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    return head + "".join("| " + " | ".join(cell(v) for v in row.values()) + " |\n" for row in rows)


def render(args, part1: list[dict], part2: list[dict]) -> str:
    import vllm

    worst = min(r["coca_over_plain"] for r in part2)
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else platform.processor() or "CPU"
    return (
        "# vllm_bench: passkey throughput, hf vs vllm and CoCA vs plain LLaMA under vLLM\n\n"
        f"Device: {args.device} ({device}); {os.cpu_count()} CPU cores; torch "
        f"{torch.__version__}, {torch.get_num_threads()} torch thread(s) after vLLM's start-up; vllm "
        f"{vllm.__version__}; float32; {args.model}; {args.samples} samples per length, landmark template, "
        f"greedy, max_new_tokens={args.max_new_tokens}; fastest of {args.repeats} interleaved passes.\n\n"
        "## hf vs vllm (`coca-eval passkey` generation paths; `vllm_over_hf` = throughput ratio)\n\n"
        + table(part1)
        + f"\n## CoCA vs plain LLaMA of the same shape under vLLM (random weights, {FIXED_NEW_TOKENS} tokens "
        f"each, EOS ignored; {args.pairs} paired passes per length, half with each engine started first; "
        "`coca_over_plain` = median of the "
        "per-pair throughput ratios, q1/q3 its quartiles; `cpu_time_ratio` = the same median from "
        "process CPU time)\n\n"
        + table(part2)
        + f"\nTarget CoCA >= 0.9x plain throughput: **{'met' if worst >= 0.9 else 'not met'}** "
        f"(worst {worst:.3f}x).\n" + ("" if args.device.startswith("cuda") else CPU_NOTE)
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--lengths", default="512,1024")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument(
        "--repeats", type=int, default=2, help="interleaved hf/vllm passes; the fastest counts"
    )
    parser.add_argument(
        "--device", default="cpu", help="cpu or cuda (hf runs there; vLLM picks its platform)"
    )
    parser.add_argument("--pairs", type=int, default=12, help="CoCA vs plain: paired passes per length")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)  # internal: one engine's timings
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "benchmarks" / "vllm_bench.md")
    args = parser.parse_args()
    args.lengths = [int(n) for n in args.lengths.split(",")]
    if args.worker:
        worker(args)
        return
    options = EngineOptions(enforce_eager=None)
    part1 = hf_vs_vllm(args, options, max(args.lengths) + args.max_new_tokens)
    part2 = coca_vs_plain(args)
    text = render(args, part1, part2)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
