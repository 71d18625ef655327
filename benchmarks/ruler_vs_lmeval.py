"""``coca-eval ruler`` against lm-evaluation-harness 0.4.13's ``ruler`` tasks, side by side in one run.

Same model (SmolLM2-135M-Instruct, the ``smollm2-135m`` preset's converted directory, CPU float32),
same chat template (the tokenizer's own, or none with ``--chat-template none``), same tasks, lengths and
sample count, and the same N (prompt + answer budget, RULER's meaning, in both). Ours decodes at
``--batch-size`` (default auto); lm-eval at each of ``--lmeval-batch-sizes`` (its default is 1), one row
per lm-eval batch size, so its best batch size is found in the same run. Each (task, length) is
one whole process per harness, as a user runs it, and the two alternate which goes first so machine
drift cannot favour either. For every row it measures:

* time: wall time of the whole process (imports, model load, building the samples, decoding, writing),
  the process's CPU time, and the machine's 1-minute load at start and end (the machine may be shared);
* score: each harness's task score (mean per-sample score x 100) with a Wilson 95 % interval, and
  lm-eval's outputs re-scored with our RULER scoring, which must give lm-eval's own per-sample numbers;
* prompts: token counts of every prompt in the model's tokenizer, chat template and answer prefix
  included (ours are N by construction; lm-eval's are whatever its search settled on), how many NIAH
  needle lines each prompt holds and how often each expected answer appears in it, each side's answer
  budget (lm-eval's as its log records it), and the last characters of one prompt of each side.

Only tasks whose haystacks need no download work offline: ``niah_single_1`` (noise), ``niah_multikey_2``
/ ``niah_multikey_3`` (needle haystacks), ``vt``, ``cwe``, ``fwe``. lm-eval's essay tasks read Paul
Graham's essays from the hub, and its QA tasks SQuAD / HotpotQA.

    python -m venv .venv-lmeval && .venv-lmeval/bin/pip install torch==2.13.0 "lm_eval[hf,ruler]==0.4.13"
    nice python benchmarks/ruler_vs_lmeval.py [--tasks niah_single_1,vt,cwe,fwe] [--lengths 1024,2048] \\
        [--samples 2] [--chat-template auto|none] [--batch-size auto] [--lmeval-batch-sizes 1,4,20] \\
        [--lmeval-venv .venv-lmeval] [--report reports/benchmarks/ruler_vs_lmeval.md]

``--install`` creates the lm-eval venv (the two lines above) when it is missing. Prints one JSON line
per row, then the markdown report (also written to ``--report``). It asserts nothing about timings.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LMEVAL_PINS = ("torch==2.13.0", "lm_eval[hf,ruler]==0.4.13")
OFFLINE_TASKS = "niah_single_1,niah_multikey_2,vt,cwe,fwe"
# lm-eval's names where they differ from RULER's (which are ours)
LMEVAL_NAMES = {"vt": "ruler_vt", "cwe": "ruler_cwe", "fwe": "ruler_fwe"}
NEEDLE_LINE = "One of the special magic"
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def install_lmeval(venv: Path) -> None:
    """A venv of lm-eval's own (its pins need not agree with ours); the CPU torch wheel comes first so
    pip does not fetch a CUDA build."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *LMEVAL_PINS], check=True)


def timed_process(command: list[str], log: Path) -> dict:
    """Run ``command`` to the end; its wall and CPU seconds and the load around it."""
    load_start = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with log.open("w") as out:
        result = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=child_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode not in (0, 2):  # 2: coca-eval wrote its results but some cell was an error
        raise SystemExit(f"{command[:4]} failed with {result.returncode}; see {log}")
    return {"wall_s": wall, "cpu_s": cpu, "load_start": load_start, "load_end": os.getloadavg()[0]}


def child_env() -> dict[str, str]:
    return {**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(ROOT)}


def run_ours(args, task: str, length: int, work: Path) -> dict:
    out = work / f"ours-{task}-{length}.json"
    command = [sys.executable, "-m", "coca_eval", "ruler", "--model", "smollm2-135m", "--tasks", task]
    command += ["--lengths", str(length), "--samples", str(args.samples), "--seed", str(args.seed)]
    command += ["--chat-template", args.chat_template, "--batch-size", args.batch_size, "--output", str(out)]
    timing = timed_process(command, work / f"ours-{task}-{length}.log")
    cell = json.loads(out.read_text())["cells"][0]
    if cell["status"] != "ok":
        return {**timing, "error": cell["detail"].get("error", cell["status"])}
    records = cell["detail"]["samples"]
    return {
        **timing,
        "scores": [float(r["score"]) for r in records],
        "answers": [r["answers"] for r in records],
        "outputs": [r["output"] for r in records],
        "answer_budget": cell["detail"]["answer_budget"],
    }


def run_theirs(args, model_dir: Path, task: str, length: int, batch: int, work: Path) -> dict:
    out = work / f"lmeval-{task}-{length}"
    name = LMEVAL_NAMES.get(task, task)
    metadata = json.dumps({"max_seq_lengths": [length], "tokenizer": str(model_dir)})
    command = [str(args.lmeval_venv / "bin" / "python"), "-m", "lm_eval", "run", "--model", "hf"]
    command += ["--model_args", f"pretrained={model_dir},dtype=float32", "--tasks", name]
    command += ["--metadata", metadata, "--limit", str(args.samples)]
    command += ["--apply_chat_template"] if args.chat_template == "auto" else []
    command += ["--batch_size", str(batch), "--device", "cpu", "--output_path", str(out), "--log_samples"]
    timing = timed_process(command, work / f"lmeval-{task}-{length}.log")
    logged = sorted(out.rglob(f"samples_{name}_*.jsonl"))
    if not logged:
        return {**timing, "error": f"lm-eval logged no samples (see {work}/lmeval-{task}-{length}.log)"}
    lines = [json.loads(line) for line in logged[-1].read_text().splitlines() if line.strip()]
    lines.sort(key=lambda s: s["doc_id"])
    gen = [s["arguments"]["gen_args_0"] for s in lines]
    return {
        **timing,
        "scores": [float(s[str(length)]) for s in lines],
        "answers": [list(s["doc"]["outputs"]) for s in lines],
        "outputs": [s["filtered_resps"][0] for s in lines],
        "prompts": [g["arg_0"] for g in gen],
        "answer_budget": gen[0]["arg_1"].get("max_gen_toks"),
        "stop": gen[0]["arg_1"].get("until"),
    }


class OurPrompts:
    """Our prompts rebuilt in this process (as ``coca-eval ruler`` builds them) for counting."""

    def __init__(self, model_dir: Path, chat_template: str):
        from transformers import AutoTokenizer

        from coca_eval.chat import chat_frame
        from coca_eval.ruler.prompts import RulerPromptBuilder

        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        encode = lambda text: self.tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
        self.builder = RulerPromptBuilder(encode, None, chat_frame(chat_template, self.tokenizer))

    def texts_and_lengths(self, task: str, length: int, samples: int, seed: int, answers: list) -> tuple:
        from coca_eval.ruler.params import make_ruler_params

        prompt_length = make_ruler_params({"tasks": task}).prompt_length(length, task)
        built = self.builder.build(task, length, samples, seed, prompt_length)
        if [list(s.answers) for s in built] != answers:
            raise SystemExit(f"{task}@{length}: rebuilt prompts are not the run's (answers differ)")
        return [self.tokenizer.decode(s.ids) for s in built], [len(s.ids) for s in built]

    def count(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False).input_ids)


def prompt_facts(texts: list[str], lengths: list[int], answers: list[list[str]]) -> dict:
    occurrences = [text.count(a) for text, refs in zip(texts, answers, strict=True) for a in refs]
    return {
        "tokens": lengths,
        "needle_lines": [t.count(NEEDLE_LINE) for t in texts],
        "answer_occurrences": [min(occurrences), max(occurrences)],
        "tail": texts[0][-160:],
    }


def score_summary(scores: list[float]) -> dict:
    from coca_eval.generation.effective import score_interval

    value = 100 * sum(scores) / len(scores)
    return {"score": value, "interval95": list(score_interval(value, len(scores)))}


def rescored(task: str, outputs: list[str], answers: list[list[str]]) -> list[float]:
    from coca_eval.ruler.scoring import score_sample
    from coca_eval.ruler.tasks import RULER_TASKS

    spec = RULER_TASKS.get(task)
    return [score_sample(spec, o, a)["score"] for o, a in zip(outputs, answers, strict=True)]


def measure_row(args, prompts, model_dir: Path, task: str, length: int, batch: int, first: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"ruler-vs-lmeval-{task}-{length}-"))
    runs = {}
    for side in (first, "theirs" if first == "ours" else "ours"):
        if side == "ours":
            runs["ours"] = run_ours(args, task, length, work)
        else:
            runs["theirs"] = run_theirs(args, model_dir, task, length, batch, work)
    ours, theirs = runs["ours"], runs["theirs"]
    row = {"task": task, "length": length, "samples": args.samples, "first": first, "work": str(work)}
    row["machine"] = machine_text()
    row["lmeval_batch_size"], row["batch_size"] = batch, args.batch_size
    for side, run in runs.items():
        row[side] = {k: run[k] for k in ("wall_s", "cpu_s", "load_start", "load_end", "error") if k in run}
    if "error" in ours or "error" in theirs:
        return row
    texts, lengths = prompts.texts_and_lengths(task, length, args.samples, args.seed, ours["answers"])
    row["ours"].update(score_summary(ours["scores"]), budget=ours["answer_budget"], outputs=ours["outputs"])
    row["ours"]["prompt"] = prompt_facts(texts, lengths, ours["answers"])
    theirs_lengths = [prompts.count(t) for t in theirs["prompts"]]
    row["theirs"].update(score_summary(theirs["scores"]), budget=theirs["answer_budget"], stop=theirs["stop"])
    row["theirs"]["outputs"] = theirs["outputs"]
    row["theirs"]["prompt"] = prompt_facts(theirs["prompts"], theirs_lengths, theirs["answers"])
    ours_scoring = rescored(task, theirs["outputs"], theirs["answers"])
    row["theirs"]["rescored_by_ours_equal"] = ours_scoring == theirs["scores"]
    row["wall_ratio_ours_over_theirs"] = ours["wall_s"] / theirs["wall_s"]
    row["cpu_ratio_ours_over_theirs"] = ours["cpu_s"] / theirs["cpu_s"]
    return row


def fmt_score(side: dict) -> str:
    if "error" in side:
        return "error"
    low, high = side["interval95"]
    return f"{side['score']:.0f} [{low:.0f}, {high:.0f}]"


def fmt_tokens(side: dict) -> str:
    if "prompt" not in side:
        return "-"
    tokens = side["prompt"]["tokens"]
    return str(tokens[0]) if len(set(tokens)) == 1 else f"{min(tokens)}-{max(tokens)}"


def reproducing_commands(rows: list[dict], args) -> list[str]:
    """The commands that measure these rows, read from the rows themselves: one per set of lengths
    that share their tasks and lm-eval batch sizes, so none measures a cell the rows do not hold."""
    groups: dict[tuple[str, str], list[str]] = {}
    for length in dict.fromkeys(r["length"] for r in rows):
        of = [r for r in rows if r["length"] == length]
        tasks = ",".join(dict.fromkeys(r["task"] for r in of))
        batches = ",".join(dict.fromkeys(str(r.get("lmeval_batch_size", 1)) for r in of))
        groups.setdefault((tasks, batches), []).append(str(length))
    report = f" --report {args.report}" if len(groups) == 1 else ""
    return [
        f"python benchmarks/ruler_vs_lmeval.py --tasks {tasks} --lengths {','.join(lengths)} "
        f"--samples {args.samples} --seed {args.seed} --chat-template {args.chat_template} "
        f"--batch-size {args.batch_size} --lmeval-batch-sizes {batches}{report}"
        for (tasks, batches), lengths in groups.items()
    ]


def commands_text(rows: list[dict], args) -> str:
    commands = reproducing_commands(rows, args)
    if len(commands) == 1:
        return f"Command: `{commands[0]}`"
    render = (
        f"`python benchmarks/ruler_vs_lmeval.py --from-rows {args.from_rows} --samples {args.samples} "
        f"--seed {args.seed} --chat-template {args.chat_template} --batch-size {args.batch_size} "
        f"--report {args.report}`"
    )
    listed = "; ".join(f"`{c}`" for c in commands)
    return (
        f"Commands, each printing its rows as JSON lines: {listed}; the rows together render this: {render}"
    )


def report(rows: list[dict], args) -> str:
    lines = [
        "# coca-eval ruler vs lm-evaluation-harness 0.4.13 ruler",
        "",
        f"SmolLM2-135M-Instruct (Q4_1 GGUF dequantised to float32), "
        f"{'its chat template' if args.chat_template == 'auto' else 'no chat template'}, CPU, "
        f"{args.samples} samples per task and length, seed {args.seed}, N = prompt + answer budget on both "
        f"sides; ours at --batch-size {args.batch_size}, lm-eval at the batch size of the row. One whole "
        f"process per harness and row, alternating which goes first. {machines_text(rows)} "
        "(load = 1-minute load average at the start and end of each process).",
        "",
        commands_text(rows, args),
        "",
        "| task | N | lm-eval batch | ours wall s | lm-eval wall s | lm-eval/ours wall | ours CPU s | "
        "lm-eval CPU s | load | ours score | lm-eval score | ours prompt tokens | lm-eval prompt tokens | "
        "answer budget ours/lm-eval |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        o, t = r["ours"], r["theirs"]
        loads = [o["load_start"], o["load_end"], t["load_start"], t["load_end"]]
        ratio = 1 / r["wall_ratio_ours_over_theirs"] if r.get("wall_ratio_ours_over_theirs") else None
        lines.append(
            f"| {r['task']} | {r['length']} | {r.get('lmeval_batch_size', 1)} | {o['wall_s']:.0f} | "
            f"{t['wall_s']:.0f} | {f'{ratio:.2f}x' if ratio else '-'} | {o['cpu_s']:.0f} | "
            f"{t['cpu_s']:.0f} | "
            f"{min(loads):.1f}-{max(loads):.1f} | {fmt_score(o)} | {fmt_score(t)} | {fmt_tokens(o)} | "
            f"{fmt_tokens(t)} | {o.get('budget', '-')}/{t.get('budget', '-')} |"
        )
    done = [r for r in rows if "wall_ratio_ours_over_theirs" in r]
    if done:
        wall = [sum(r[s]["wall_s"] for r in done) for s in ("ours", "theirs")]
        cpu = [sum(r[s]["cpu_s"] for r in done) for s in ("ours", "theirs")]
        lines += [
            "",
            f"Totals over {len(done)} rows: wall {wall[0]:.0f} s ours, {wall[1]:.0f} s lm-eval "
            f"(ours/lm-eval {wall[0] / wall[1]:.2f}); CPU {cpu[0]:.0f} s ours, {cpu[1]:.0f} s lm-eval "
            f"(ours/lm-eval {cpu[0] / cpu[1]:.2f}); median wall ratio "
            f"{statistics.median(r['wall_ratio_ours_over_theirs'] for r in done):.2f}.",
        ]
    lines += ["", "## Prompts", "", "| task | N | side | needle lines | answer occurrences | outputs |"]
    lines += ["|---|---|---|---|---|---|"]
    for r in done:
        for side, name in (("ours", "ours"), ("theirs", "lm-eval")):
            p = r[side]["prompt"]
            outs = " / ".join(repr(o[:40]) for o in r[side]["outputs"]).replace("|", "\\|")
            lines.append(
                f"| {r['task']} | {r['length']} | {name} | {p['needle_lines']} | "
                f"{p['answer_occurrences'][0]}-{p['answer_occurrences'][1]} | {outs} |"
            )
    lines += ["", "How each side's first prompt ends (last 160 characters):", ""]
    for r in done:
        for side, name in (("ours", "ours"), ("theirs", "lm-eval")):
            lines.append(f"- {r['task']} @ {r['length']}, {name}: `{r[side]['prompt']['tail']!r}`")
    same = all(r["theirs"]["rescored_by_ours_equal"] for r in done)
    lines += [
        "",
        f"lm-eval's outputs re-scored by coca-eval's RULER scoring equal lm-eval's per-sample scores: "
        f"{'yes, every row' if same else 'NO (see the JSON lines)'}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--tasks", default=OFFLINE_TASKS)
    parser.add_argument("--lengths", default="1024,2048")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--chat-template", choices=("auto", "none"), default="auto")
    parser.add_argument("--batch-size", default="auto", help="ours: N or auto")
    parser.add_argument("--lmeval-batch-sizes", default="1", help="lm-eval's, one row each: 1,4,20")
    parser.add_argument("--lmeval-venv", type=Path, default=ROOT / ".venv-lmeval")
    parser.add_argument("--install", action="store_true", help="create the lm-eval venv if it is missing")
    parser.add_argument("--report", type=Path, default=None)
    parser.add_argument("--from-rows", type=Path, help="render the report from saved JSON lines instead")
    args = parser.parse_args()
    if args.from_rows:
        rows = [json.loads(line) for line in args.from_rows.read_text().splitlines() if line.startswith("{")]
        return finish(report(rows, args), args)
    if args.install:
        install_lmeval(args.lmeval_venv)
    if not (args.lmeval_venv / "bin" / "python").exists():
        raise SystemExit(f"no lm-eval venv at {args.lmeval_venv} (run with --install)")
    from coca_eval.models.gguf import materialize_gguf
    from coca_eval.models.presets import SMOLLM2_135M

    model_dir = materialize_gguf(SMOLLM2_135M)
    prompts = OurPrompts(model_dir, args.chat_template)
    rows = []
    batches = [int(b) for b in args.lmeval_batch_sizes.split(",")]
    pairs = [(t, int(n), b) for t in args.tasks.split(",") for n in args.lengths.split(",") for b in batches]
    for i, (task, length, batch) in enumerate(pairs):
        first = "ours" if i % 2 == 0 else "theirs"
        row = measure_row(args, prompts, model_dir, task, length, batch, first)
        print(json.dumps(row), flush=True)
        rows.append(row)
    finish(report(rows, args), args)


def machine_text() -> str:
    """CPU model, vector class and core count: timings mean little without them."""
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    names = [line.split(":", 1)[1].strip() for line in flags.splitlines() if line.startswith("model name")]
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{names[0] if names else 'CPU'}, {vector}, {os.cpu_count()} cores"


def machines_text(rows: list[dict]) -> str:
    """The machine each row was measured on: rows kept from earlier runs may come from another machine
    than the one rendering them, and a row that does not say which is refused rather than relabelled."""
    unnamed = [f"{r['task']}@{r['length']}" for r in rows if not r.get("machine")]
    if unnamed:
        raise SystemExit(f"rows without the machine they were measured on: {', '.join(unnamed)}")
    machines = list(dict.fromkeys(r["machine"] for r in rows))
    if len(machines) == 1:
        return f"Machine: {machines[0]}"
    where = {m: ", ".join(f"{r['task']} {r['length']}" for r in rows if r["machine"] == m) for m in machines}
    return "Machines, each row on one: " + "; ".join(f"{m} ({w})" for m, w in where.items())


def finish(text: str, args) -> None:
    print(text)
    if args.report:
        args.report.write_text(text)


if __name__ == "__main__":
    main()
