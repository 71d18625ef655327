"""Where a zoo model's attention goes past its trained window, and what that costs per position.

One forward of the first 4096 tokens of each held-out book (no sliding window): perplexity in
512-token bins by position, and for the last 64 queries of a 512-token and of a 4096-token forward,
per layer and head, the attention mass on the 16 nearest keys, the largest single weight, and the
median position of the most attended key. A model that loses its local context past the window
shows the local mass falling to zero; one whose far logits become large (rather than merely
diluted) shows a large single weight on a key far back. This produced the diagnostics quoted in
``reports/zoo/README.md`` (recipe v3 experiments):

    python benchmarks/zoo_far_attention.py runs/probes/probe-h/model
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, AutoTokenizer

from coca_eval.zoo.corpus import load_split

QUERIES, NEAR = 64, 16


def binned_perplexity(model, ids: torch.Tensor, width: int = 512) -> list[float]:
    """Perplexity of one forward over ``ids`` (1, n + 1), in ``width``-token bins by position."""
    with torch.no_grad():
        logits = model(input_ids=ids[:, :-1]).logits[0]  # (n, vocab)
    nll = F.cross_entropy(logits, ids[0, 1:], reduction="none")  # (n,)
    return [nll[i : i + width].mean().exp().item() for i in range(0, len(nll), width)]


def last_query_attention(model, ids: torch.Tensor) -> list[dict[str, list[float]]]:
    """Per layer: each head's mass on the ``NEAR`` nearest keys, largest weight, and median argmax
    position, over the last ``QUERIES`` queries of one forward over ``ids`` (1, n)."""
    with torch.no_grad():
        attentions = model(input_ids=ids, output_attentions=True).attentions
    rows = []
    for layer in attentions:
        last = layer[0, :, -QUERIES:, :]  # (heads, QUERIES, n)
        rows.append(
            {
                "near": last[:, :, -NEAR:].sum(-1).mean(-1).tolist(),
                "max": last.max(-1).values.mean(-1).tolist(),
                "argmax": last.argmax(-1).float().median(-1).values.tolist(),
            }
        )
    return rows


def show(label: str, rows: list[dict[str, list[float]]]) -> None:
    print(label)
    for index, row in enumerate(rows):
        near = " ".join(f"{x:.2f}" for x in row["near"])
        top = " ".join(f"{x:.2f}" for x in row["max"])
        where = " ".join(str(int(x)) for x in row["argmax"])
        print(f"  layer {index}: near{NEAR} {near} | max weight {top} | argmax at {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a zoo model directory")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation="eager").eval()
    for doc in load_split("heldout"):
        ids = torch.tensor(tokenizer(doc.text)["input_ids"][:4097])[None]  # (1, 4097)
        bins = " ".join(f"{p:.0f}" for p in binned_perplexity(model, ids))
        print(f"{doc.doc_id}: perplexity by 512-token bin of one 4096-token forward: {bins}")
        for n in (512, 4096):
            label = f"{doc.doc_id}, last {QUERIES} queries of a {n}-token forward:"
            show(label, last_query_attention(model, ids[:, :n]))


if __name__ == "__main__":
    main()
