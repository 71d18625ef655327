"""Our passkey path vs naive per-sample ``generate(max_new_tokens=64)``, side by side in one run.

SmolLM2-135M by default (any ``--model``, with a ``--rope`` patch), CPU float32, the paper's template
and sampling. For each length:

* naive: every sample on its own, ``model.generate(prompt, max_new_tokens=64, do_sample=False)``;
* ours: ``decode_prompts`` as ``coca-eval passkey`` runs it (shared-prefix KV reuse + early stop).

Ours runs before and after the naive pass and its time is the mean of the two, so machine drift
cannot favour it. Correctness (first integer == key) must be identical sample by sample, and our
tokens must be a prefix of what ``generate`` produced.

    python benchmarks/passkey_bench.py [--lengths 1024,2048] [--samples 20] [--report PATH]
    python benchmarks/passkey_bench.py --model zoo-rope --rope dynamic:4 --lengths 2048,4096 \
        --report reports/benchmarks/passkey_bench_dynamic.md

With dynamic rope scaling the naive pass resets the tables before each sample (``generate`` would
otherwise start from the scaling the previous sample grew to), so it is a fresh run every time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
import torch
from rich.console import Console

from coca_eval.backends.hf import load_hf_backend
from coca_eval.backends.hf_generation import GreedyDecoder, decode_prompts
from coca_eval.methods import make_method
from coca_eval.passkey.answer import passkey_stop, score_output
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.task import draw_samples_for, prompt_builder
from coca_eval.tables import rich_table

ROOT = Path(__file__).resolve().parent.parent


@torch.inference_mode()
def naive(backend, prompts, max_new_tokens) -> list[list[int]]:
    outputs = []
    for prompt in prompts:
        backend.reset_dynamic_rope()
        ids = torch.tensor([prompt.ids])
        generated = backend.model.generate(
            ids, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=backend.tokenizer.eos_token_id
        )
        outputs.append(generated[0, len(prompt.ids) :].tolist())
    return outputs


def ours(backend, prompts, max_new_tokens) -> list[list[int]]:
    found: dict[int, list[int]] = {}
    decoder = GreedyDecoder(backend, passkey_stop(max_new_tokens))
    decode_prompts(decoder, [p.ids for p in prompts], [p.shared_prefix for p in prompts], found.__setitem__)
    return [found[i] for i in range(len(prompts))]


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def bench_length(backend, length: int, samples: int, max_new: int) -> dict:
    params = make_passkey_params({"lengths": [length], "samples": samples, "max_new_tokens": max_new})
    builder = prompt_builder(params, backend)
    keys = [s.key for s in draw_samples_for(params, length)]
    prompts = [builder.build(s, length) for s in draw_samples_for(params, length)]
    first, t_first = timed(lambda: ours(backend, prompts, max_new))
    reference, t_naive = timed(lambda: naive(backend, prompts, max_new))
    second, t_second = timed(lambda: ours(backend, prompts, max_new))
    assert first == second
    decode = lambda tokens: backend.tokenizer.decode(tokens, skip_special_tokens=True)  # noqa: E731
    ours_correct = [score_output(decode(t), k)["correct"] for t, k in zip(first, keys, strict=True)]
    naive_correct = [score_output(decode(t), k)["correct"] for t, k in zip(reference, keys, strict=True)]
    prefixes = sum(r[: len(o)] == o for o, r in zip(first, reference, strict=True))
    return {
        "length": length,
        "samples": samples,
        "naive_s": t_naive,
        "ours_s": (t_first + t_second) / 2,
        "accuracy_naive": sum(naive_correct) / samples,
        "accuracy_ours": sum(ours_correct) / samples,
        "same_correctness": ours_correct == naive_correct,
        "token_prefix_matches": prefixes,
        "mean_new_tokens_ours": sum(map(len, first)) / samples,
        "mean_new_tokens_naive": sum(map(len, reference)) / samples,
    }


def render(frame: pd.DataFrame, args) -> str:
    shown = frame.assign(ratio=(frame["ours_s"] / frame["naive_s"]).map("{:.3f}x".format))
    head = (
        "# passkey_bench: coca-eval passkey path vs naive per-sample generate\n\n"
        f"{args.model} (rope patch: {args.rope}), CPU float32, {torch.get_num_threads()} threads, "
        f"torch {torch.__version__}; "
        f"{args.samples} samples per length, landmark template, greedy, "
        f"max_new_tokens={args.max_new_tokens}. "
        "`ratio` = ours / naive wall time (target <= 0.5x).\n\n"
    )
    return head + shown.to_markdown(index=False, floatfmt=".3f") + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--rope", default="none", help="a --rope patch, e.g. dynamic:4")
    parser.add_argument("--lengths", default="1024,2048")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--report", type=Path, default=ROOT / "reports" / "benchmarks" / "passkey_bench.md")
    args = parser.parse_args()
    torch.set_num_threads(2)
    backend = load_hf_backend(make_method(args.model, args.rope, None, "float32", "hf"))
    rows = []
    for length in map(int, args.lengths.split(",")):
        rows.append(bench_length(backend, length, args.samples, args.max_new_tokens))
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    Console().print(rich_table(frame.set_index("length").astype(str), title="passkey_bench"))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(render(frame, args))
    print(render(frame, args))


if __name__ == "__main__":
    main()
