"""Our perplexity engine vs the Hugging Face perplexity-guide loop, side by side in one run.

For each model: the same document tokens, L=2048, S=512, CPU float32.

* guide: the guide's loop (batch 1, full logits, ``labels=``), its reported PPL and the exact
  per-token average of what it scores;
* bare: ``model(window, logits_to_keep=scored + 1)`` per window, nothing else (the floor for any harness);
* ours: ``score_tokens`` with the engine's plan (the code path ``coca-eval ppl`` uses).

Windows are timed interleaved (guide, bare, ours rotating per window) so machine drift hits all three
alike, in several passes over the document; each window counts with its fastest run per implementation
(timings on a shared 2-core VM wander by tens of percent between minutes). Peak memory at L=8k is
measured in a fresh subprocess per implementation (Linux VmHWM, reset through /proc/self/clear_refs
after the model is loaded).

    python benchmarks/ppl_bench.py [--models smollm2-135m,gemma3-270m] [--passes 3] [--report PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import torch
from rich.console import Console

from coca_eval.backends.hf import load_hf_backend
from coca_eval.data.books import load_embedded_books
from coca_eval.data.sampling import leading_tokens
from coca_eval.methods import make_method
from coca_eval.ppl.engine import score_tokens
from coca_eval.ppl.reference import hf_guide_loop
from coca_eval.ppl.windows import plan_windows
from coca_eval.tables import rich_table

ROOT = Path(__file__).resolve().parent.parent


def document_ids(backend, tokens: int) -> list[int]:
    """The first ``tokens`` tokens of Alice, with BOS in front where the tokenizer adds one (as the guide
    gets it from ``tokenizer(text)``); both implementations see exactly these ids."""
    text = load_embedded_books()[0].text
    prefix = [backend.bos_token_id] if backend.adds_bos else []
    return prefix + leading_tokens(text, backend.encode, tokens - len(prefix))


@torch.inference_mode()
def guide_window(model, ids, begin, end, trg_len) -> None:
    input_ids = torch.tensor([ids[begin:end]])
    target_ids = input_ids.clone()
    target_ids[:, :-trg_len] = -100
    model(input_ids=input_ids, labels=target_ids).loss.item()


@torch.inference_mode()
def bare_window(model, ids, window) -> None:
    model(input_ids=torch.tensor([ids[window.start : window.end]]), logits_to_keep=window.n_scored + 1)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_all(backend, ids, length, stride, passes: int) -> dict[str, float]:
    """Seconds per implementation: each window's fastest of ``passes`` interleaved runs, summed."""
    model, plan = backend.model, plan_windows(len(ids), length, stride, "never")
    best: dict[str, list[float]] = {"guide": [math.inf] * len(plan), "bare": [math.inf] * len(plan)}
    best["ours"] = [math.inf] * len(plan)
    for p in range(passes):
        prev_end = 0
        for i, window in enumerate(plan):
            begin, end = window.start, window.end
            runs = {
                "guide": lambda b=begin, e=end, t=end - prev_end: guide_window(model, ids, b, e, t),
                "bare": lambda w=window: bare_window(model, ids, w),
                "ours": lambda w=window: score_tokens(backend, ids, [w]),
            }
            prev_end = end
            names = list(runs)
            for name in names[(i + p) % 3 :] + names[: (i + p) % 3]:
                best[name][i] = min(best[name][i], timed(runs[name]))
    return {name: sum(seconds) for name, seconds in best.items()}


def memory_child(model_name: str, impl: str, length: int) -> None:
    """Run in a fresh process: peak RSS growth of one L-token window under ``impl``."""
    torch.set_num_threads(2)
    backend = load_hf_backend(make_method(model_name, "none", None, "float32", "hf"))
    ids = document_ids(backend, length)
    window = plan_windows(len(ids), length, length // 4, "never")[0]
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb("VmRSS")
    if impl == "guide":
        guide_window(backend.model, ids, 0, len(ids), len(ids))
    else:
        score_tokens(backend, ids, [window])
    print(json.dumps({"peak_mb": (_status_kb("VmHWM") - before) / 1024}))


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def peak_memory(model_name: str, impl: str, length: int) -> float | None:
    cmd = [sys.executable, __file__, "--child", impl, "--models", model_name, "--mem-length", str(length)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"  memory child {impl} failed (rc {out.returncode}): {out.stderr.strip()[-300:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]


def bench_model(name: str, args) -> dict:
    torch.set_num_threads(2)
    backend = load_hf_backend(make_method(name, "none", None, "float32", "hf"))
    ids = document_ids(backend, args.doc_tokens)
    ours_nll = score_tokens(backend, ids, plan_windows(len(ids), args.length, args.stride, "never"))
    guide_ppl, guide_exact, n_scored = hf_guide_loop(backend.model, ids, args.length, args.stride)
    ours_ppl = math.exp(float(ours_nll[1:].mean()))
    score_tokens(backend, ids, plan_windows(len(ids), args.length, args.stride, "never")[:1])  # warm-up
    times = time_all(backend, ids, args.length, args.stride, args.passes)
    del backend
    mem = {impl: peak_memory(name, impl, args.mem_length) for impl in ("guide", "ours")}
    return {
        "model": name,
        "tokens": len(ids),
        "scored": n_scored,
        "ppl_ours": ours_ppl,
        "ppl_guide_exact": guide_exact,
        "ppl_guide_reported": guide_ppl,
        **times,
        "mem_guide_mb": mem["guide"],
        "mem_ours_mb": mem["ours"],
    }


def results_frame(rows: list[dict]) -> pd.DataFrame:
    """One row per model; ratios as the acceptance targets state them."""
    frame = pd.DataFrame(rows).set_index("model")
    return pd.DataFrame(
        {
            "PPL ours": frame["ppl_ours"].map("{:.6f}".format),
            "PPL guide, exact per token": frame["ppl_guide_exact"].map("{:.6f}".format),
            "PPL guide, as printed": frame["ppl_guide_reported"].map("{:.6f}".format),
            "guide / ours time": (frame["guide"] / frame["ours"]).map("{:.2f}x".format),
            "ours / bare time": (frame["ours"] / frame["bare"]).map("{:.3f}x".format),
            "seconds guide / bare / ours": frame.apply(
                lambda r: f"{r['guide']:.1f} / {r['bare']:.1f} / {r['ours']:.1f}", axis=1
            ),
            "peak MB guide / ours (8k)": frame.apply(
                lambda r: f"{r['mem_guide_mb'] or 'failed'} / {r['mem_ours_mb'] or 'failed'}", axis=1
            ),
            "memory ratio": (frame["mem_ours_mb"] / frame["mem_guide_mb"]).map("{:.3f}".format),
        }
    )


NOTE = (
    "Why the printed guide PPL differs: the guide multiplies each window's mean loss by `valid_labels - 1` "
    "to undo the label shift. That is right for the first window (its first label has no prediction) but "
    "one short for every later window, whose labels are all predicted, so later windows are under-weighted "
    "by (S-1)/S relative to the first. The exact per-token average of the very same NLLs is what our engine "
    "reports, and it matches ours to float32 rounding (the banded sliding-window attention sums Gemma's "
    "local layers in a different order; about 1e-7 relative in PPL)."
)


def render(frame: pd.DataFrame, args) -> str:
    head = (
        "# ppl_bench: our engine vs the Hugging Face perplexity-guide loop "
        f"(L={args.length}, S={args.stride})\n\n"
        f"CPU float32, {torch.get_num_threads()} threads, torch {torch.__version__}; document: the first "
        f"{args.doc_tokens} tokens of Alice (embedded books); time: per window the fastest of {args.passes} "
        f"interleaved passes, summed. Peak memory: one {args.mem_length}-token "
        "window, RSS growth over the loaded model, a fresh process per implementation.\n\n"
    )
    return head + frame.to_markdown(disable_numparse=True) + "\n\n" + NOTE + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m")
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--stride", type=int, default=512)
    parser.add_argument("--doc-tokens", type=int, default=4096)
    parser.add_argument("--mem-length", type=int, default=8192)
    parser.add_argument("--passes", type=int, default=3, help="timed passes; each window's fastest counts")
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "benchmarks" / "ppl_bench.md")
    parser.add_argument("--child", choices=["guide", "ours"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return memory_child(args.models, args.child, args.mem_length)
    rows = []
    for name in args.models.split(","):
        print(f"== {name}", flush=True)
        rows.append(bench_model(name, args))
        print(json.dumps(rows[-1], indent=1), flush=True)
    frame = results_frame(rows)
    Console().print(rich_table(frame.reset_index().set_index("model"), title="ppl_bench"))
    report = render(frame, args)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(report)


if __name__ == "__main__":
    main()
