"""Turn a zoo run's mid-training ``checkpoint.pt`` into a model directory the harness can evaluate.

A run keeps only its latest checkpoint; copying it aside at chosen steps and exporting each copy gives
a recipe's extrapolation at several points of its schedule (``reports/zoo/recipe-v3/probes/J.stepN``).
The tokenizer comes from any finished zoo model with the same vocabulary (the tokenizer is a pure
function of the training books and the vocabulary size):

    python benchmarks/zoo_export_checkpoint.py runs/probes/probe-j/ckpt_600.pt \\
        runs/probes/probe-h/model runs/probes/probe-j/step600
"""

from __future__ import annotations

import argparse

import torch
from transformers import AutoTokenizer

from coca_eval.zoo.build import build_model
from coca_eval.zoo.recipe import ZooSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a copy of a run's checkpoint.pt")
    parser.add_argument("tokenizer_from", help="a finished zoo model directory of the same vocabulary")
    parser.add_argument("out", help="the model directory to write")
    args = parser.parse_args()
    state = torch.load(args.checkpoint, weights_only=True)
    spec = ZooSpec.model_validate_json(state["spec"])
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer_from)
    if len(tokenizer) != spec.architecture.vocab_size:
        raise SystemExit(
            f"{args.tokenizer_from} has {len(tokenizer)} tokens, the checkpoint's model "
            f"{spec.architecture.vocab_size}"
        )
    model = build_model(spec, tokenizer.eos_token_id, tokenizer.pad_token_id)
    model.load_state_dict(state["model"])
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    print(f"step {state['step']} of {spec.name} written to {args.out}")


if __name__ == "__main__":
    main()
