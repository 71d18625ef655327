"""``coca-eval mrcr --source openai`` against the loop a user would write: transformers ``generate``, one
conversation at a time, on the same conversations.

The conversations are MRCR's in OpenAI's published layout (``2needle/2needle_0.parquet``: ``prompt``
as a JSON list of messages, ``answer``, ``random_string_to_prepend``, ``n_needles``,
``desired_msg_index``, ``total_messages``, ``n_chars``), built offline by the project's own generator
(``coca_eval.mrcr.generate``: book passages as answers) at prompt lengths drawn from
``--min-tokens``..``--max-tokens`` in the model's tokens, chat template included.

Two processes, each a whole process as a user runs it (imports, model load, reading the rows,
rendering, decoding, writing), alternate in every round (the first to go swaps each round, so machine
drift favours neither):

* ``coca-eval``: ``cli.py mrcr --source openai --data DIR --lengths L --needles 2 --samples N`` (the
  hf backend, ``--batch-size auto``: rows of unequal lengths decode in left-padded batches), with
  ``--dump-prompts`` so the prompt ids it decoded can be compared;
* ``generate``: this file with ``--baseline``: ``AutoModelForCausalLM`` and its tokenizer,
  ``apply_chat_template(messages, add_generation_prompt=True)``, then ``model.generate(ids,
  do_sample=False, max_new_tokens=2048)`` (MRCR's answer budget for published rows; EOS stops it, as
  the model's generation config says), one conversation after another.

Same model (``smollm2-135m``'s converted directory, float32, CPU), same greedy rule, budget and stop.
Printed: each round's wall seconds per side, the ratio of the medians (generate / coca-eval), how many
prompts have the very same ids on both sides and how many outputs are the same text, the tokens
generated, and the machine (CPU model, cores, ``grep -c avx512f /proc/cpuinfo``, load before and
after each process). Asserts nothing about timings.

    nice python benchmarks/mrcr_bench.py [--conversations 16] [--min-tokens 1024] [--max-tokens 4000] \\
        [--rounds 3] [--report reports/benchmarks/mrcr_bench.md]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET = (
    2048  # coca_eval.mrcr.tasks.PUBLISHED_ANSWER_BUDGET, repeated so the baseline imports nothing of ours
)
ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def build_rows(folder: Path, model: str, count: int, low: int, high: int, seed: int) -> list[int]:
    """``count`` 2-needle conversations in OpenAI's layout under ``folder``; their prompt lengths."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from transformers import AutoTokenizer

    from coca_eval.backends.special_tokens import encode_plain
    from coca_eval.generation.haystacks import load_essay
    from coca_eval.models.presets import resolve_model
    from coca_eval.mrcr.conversation import ConversationFrame
    from coca_eval.mrcr.generate import GeneratedConversations
    from coca_eval.mrcr.tasks import task_of

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(model)[0])
    encode = lambda text: encode_plain(tokenizer, text)  # noqa: E731
    decode = lambda ids: tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)  # noqa: E731
    frame = ConversationFrame(tokenizer.chat_template, tokenizer, encode, None)
    builder = GeneratedConversations(frame, encode, decode, load_essay("books").sentences, task_of)
    rng, rows, lengths = random.Random(seed), [], []
    for index in range(count):
        sample = builder.build_one(task_of("2needle"), high, index, seed, rng.randrange(low, high + 1))
        messages = list(sample.messages)
        wanted = sample.detail["needle_turns"][sample.detail["wanted"] - 1]
        prompt = json.dumps(messages)
        rows.append({"prompt": prompt, "answer": sample.answers[0],
                     "random_string_to_prepend": sample.detail["prefix"], "n_needles": 2,
                     "desired_msg_index": 2 * wanted + 1, "total_messages": len(messages),
                     "n_chars": len(prompt)})  # fmt: skip
        lengths.append(len(sample.ids))
    (folder / "2needle").mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "2needle" / "2needle_0.parquet")
    return lengths


def baseline(data: Path, model_dir: str, out: Path) -> None:
    """The plain loop: one conversation at a time through ``generate``; writes each row's prompt ids
    and output."""
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    results = []
    for row in pq.read_table(data / "2needle" / "2needle_0.parquet").to_pylist():
        messages = json.loads(row["prompt"])
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_dict=False)
        with torch.inference_mode():
            generated = model.generate(
                torch.tensor([ids]), do_sample=False, max_new_tokens=BUDGET
            )  # (1, n + new)
        new = generated[0, len(ids) :].tolist()
        results.append({"prompt_ids": ids, "output": tokenizer.decode(new, skip_special_tokens=True),
                        "generated": len(new)})  # fmt: skip
    out.write_text(json.dumps(results))


def _load() -> float:
    return os.getloadavg()[0]


def _timed(command: list[str]) -> dict:
    start_load, start = _load(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {"seconds": seconds, "load_before": start_load, "load_after": _load()}


def ours(data: Path, model: str, length: int, count: int, scratch: Path) -> tuple[dict, list[dict]]:
    output, prompts = scratch / "run.json", scratch / "prompts"
    command = [sys.executable, "cli.py", "mrcr", "--source", "openai", "--data", str(data), "--model", model,
               "--needles", "2", "--lengths", str(length), "--samples", str(count), "--output", str(output),
               "--dump-prompts", str(prompts)]  # fmt: skip
    timing = _timed(command)
    samples = json.loads(output.read_text())["cells"][0]["detail"]["samples"]
    rows = map(json.loads, (prompts / "mrcr.jsonl").open())  # the family's dump: one file, rows by task
    dumped = {row["index"]: row for row in rows if row["task"] == "2needle"}
    rows = [{"prompt_ids": dumped[s["index"]]["prompt_ids"], "output": s["output"]} for s in samples]
    return timing, rows


def theirs(data: Path, model_dir: str, scratch: Path) -> tuple[dict, list[dict]]:
    out = scratch / "generate.json"
    timing = _timed(
        [sys.executable, __file__, "--baseline", str(data), "--model-dir", model_dir, "--out", str(out)]
    )
    return timing, json.loads(out.read_text())


def machine() -> str:
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "?")
    avx512 = sum(1 for line in cpuinfo if line.startswith("flags") and " avx512f" in line)
    return f"{cpu}, {os.cpu_count()} cores, `grep -c avx512f /proc/cpuinfo` = {avx512}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--conversations", type=int, default=16)
    parser.add_argument("--min-tokens", type=int, default=1024)
    parser.add_argument("--max-tokens", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.baseline:
        return baseline(args.baseline, args.model_dir, args.out)
    from coca_eval.models.presets import resolve_model

    model_dir = resolve_model(args.model)[0]
    length = args.max_tokens + BUDGET
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "mrcr"
        lengths = build_rows(
            data, args.model, args.conversations, args.min_tokens, args.max_tokens, args.seed
        )
        rounds = []
        for n in range(args.rounds):
            scratch = Path(tmp) / f"round{n}"
            scratch.mkdir()
            sides = {}
            for side in ("coca-eval", "generate") if n % 2 == 0 else ("generate", "coca-eval"):
                if side == "coca-eval":
                    sides[side] = ours(data, args.model, length, args.conversations, scratch)
                else:
                    sides[side] = theirs(data, model_dir, scratch)
                print(json.dumps({"round": n, "side": side, **sides[side][0]}), flush=True)
            rounds.append(sides)
            report = summary(args, lengths, rounds)  # written after every round: a long run can be cut
            if args.report:
                args.report.write_text(report)
    print(report)


def summary(args, lengths: list[int], rounds: list[dict]) -> str:
    ours_s = [r["coca-eval"][0]["seconds"] for r in rounds]
    theirs_s = [r["generate"][0]["seconds"] for r in rounds]
    mine = {tuple(r["prompt_ids"]): r["output"] for r in rounds[0]["coca-eval"][1]}
    baseline_rows = rounds[0]["generate"][1]
    same_prompt = sum(tuple(r["prompt_ids"]) in mine for r in baseline_rows)
    same_output = sum(mine.get(tuple(r["prompt_ids"])) == r["output"] for r in baseline_rows)
    stable = all(r["coca-eval"][1] == rounds[0]["coca-eval"][1] for r in rounds)
    generated = [r["generated"] for r in baseline_rows]
    lines = [
        "# MRCR (`--source openai`) against a one-conversation-at-a-time `generate` loop",
        "",
        f"Command: `nice python benchmarks/mrcr_bench.py --conversations {args.conversations} "
        f"--min-tokens {args.min_tokens} --max-tokens {args.max_tokens} --rounds {args.rounds} "
        f"--model {args.model}`",
        "",
        f"Machine: {machine()}.",
        f"Rows: {len(lengths)} 2-needle conversations of {min(lengths)}-{max(lengths)} prompt tokens "
        f"(median {statistics.median(lengths):.0f}), one length N = {args.max_tokens + BUDGET} "
        f"(prompt + the {BUDGET}-token answer budget), so all decode in one call.",
        f"Generated tokens per conversation (generate): min {min(generated)}, median "
        f"{statistics.median(generated):.0f}, max {max(generated)}, total {sum(generated)}.",
        "",
        "| round | first | coca-eval s | generate s | load before / after: coca-eval | generate |",
        "|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(rounds):
        first = next(iter(r))
        o, t = r["coca-eval"][0], r["generate"][0]
        lines.append(
            f"| {n} | {first} | {o['seconds']:.1f} | {t['seconds']:.1f} | "
            f"{o['load_before']:.1f} / {o['load_after']:.1f} | "
            f"{t['load_before']:.1f} / {t['load_after']:.1f} |"
        )
    ratio = statistics.median(theirs_s) / statistics.median(ours_s)
    lines += [
        "",
        f"**Ratio (median generate / median coca-eval): {ratio:.2f}x** "
        f"(per round: {', '.join(f'{t / o:.2f}' for o, t in zip(ours_s, theirs_s, strict=True))}).",
        "",
        f"Same prompt ids on both sides: {same_prompt} of {len(baseline_rows)}; same output text: "
        f"{same_output} of {len(baseline_rows)}; coca-eval's outputs the same in every round: {stable}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
