"""The shipped form of a trained zoo model: a ``from_pretrained`` directory plus ``zoo.json``.

``zoo.json`` records what a reader needs to trust the weights: the spec (recipe, architecture,
position scheme), the sha256 of every book and of the tokenizer, steps and tokens seen, training
time and tokens/s on the machine that trained it (and whether bf16 autocast was used there), and
the final training and held-out losses.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from coca_eval import __version__
from coca_eval.zoo.hardware import machine_description, model_device, use_bf16_autocast
from coca_eval.zoo.recipe import Recipe
from coca_eval.zoo.training_data import ZooData

LAST_STEPS = 50  # the final training loss is the mean over the last logged steps in this window


def final_train_loss(entries: list[dict], last_step: int) -> float:
    recent = [e["loss"] for e in entries if e["step"] > last_step - LAST_STEPS]
    return sum(recent) / len(recent)


def save_trained(
    spec: dict,
    recipe: Recipe,
    run_dir: Path,
    model,
    data: ZooData,
    log: list[dict],
    seconds: float,
    heldout: float,
) -> Path:
    """Write ``run_dir/model`` (weights, tokenizer, ``zoo.json``); ``spec`` is the entry as JSON data and
    ``recipe`` the optimisation that produced these weights (a fine-tune's last stage)."""
    out = run_dir / "model"
    device = model_device(model)
    trained_on, bf16 = machine_description(device), use_bf16_autocast(recipe.bf16_autocast, device)
    model.to("cpu")
    model.save_pretrained(out, safe_serialization=True)
    data.tokenizer.save_pretrained(out)
    steps = recipe.steps
    tokens = steps * recipe.batch_size * recipe.context
    meta = {
        "spec": spec,
        "coca_eval_version": __version__,
        "torch": torch.__version__,
        "machine": trained_on,
        "bf16_autocast_used": bf16,
        "data": {"splits": data.splits, "book_sha256": data.book_hashes},
        "tokenizer_sha256": data.tokenizer_sha256,
        "parameters": sum(p.numel() for p in model.parameters()),
        "steps": steps,
        "tokens": tokens,
        "train_seconds": round(seconds, 1),
        "tokens_per_second": round(tokens / seconds, 1),
        "final_train_loss": round(final_train_loss(log, steps), 4),
        "heldout_loss": round(heldout, 4),
    }
    (out / "zoo.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return out
