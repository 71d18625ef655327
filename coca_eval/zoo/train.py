"""Train one zoo model: the shared recipe, periodic checkpoints, resume after a kill, a loss log.

A run writes into its own directory: ``checkpoint.pt`` (weights, optimiser, step, time spent) every
``checkpoint_every`` steps, ``train_log.jsonl`` (one line per logged step), and at the end a
``from_pretrained`` directory (safetensors, tokenizer, ``zoo.json`` with the recipe, data hashes,
steps, tokens/s and final losses). Rerunning the same command continues from the checkpoint; a
checkpoint made by a different spec is refused rather than silently mixed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.artifact import save_trained
from coca_eval.zoo.batches import TrainingStream
from coca_eval.zoo.build import build_model
from coca_eval.zoo.hardware import model_device, resolve_device, use_bf16_autocast
from coca_eval.zoo.recipe import Recipe, ZooSpec, lr_at
from coca_eval.zoo.report_line import StepReporter
from coca_eval.zoo.training_data import ZooData

LOG_EVERY = 10


def next_token_loss(model, rows: torch.Tensor, bf16: bool = False) -> torch.Tensor:
    """Mean cross-entropy of every next token of ``rows`` (b, n + 1); with ``bf16`` the forward runs
    under bf16 autocast (weights and the optimiser stay fp32) and the loss is taken in fp32."""
    with torch.autocast(rows.device.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=rows[:, :-1], use_cache=False).logits  # (b, n, vocab)
    return F.cross_entropy(logits.float().flatten(0, 1), rows[:, 1:].flatten())


def make_optimizer(model, recipe: Recipe) -> torch.optim.AdamW:
    """AdamW over the trainable parameters, with weight decay on matrices only (norm gains and biases
    are not decayed). Frozen parameters (a fine-tuning stage's) are left out."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in trainable if p.dim() >= 2], "weight_decay": recipe.weight_decay},
        {"params": [p for p in trainable if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW([g for g in groups if g["params"]], lr=recipe.start_lr, betas=recipe.betas)


def train_step(model, optimizer, rows: torch.Tensor, lr: float, clip: float, bf16: bool = False) -> float:
    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = next_token_loss(model, rows, bf16)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], clip)
    optimizer.step()
    return loss.item()


@torch.no_grad()
def heldout_loss(model, windows: torch.Tensor, batch: int = 8) -> float:
    """Mean next-token loss over fixed held-out windows (the same for every zoo model)."""
    model.eval()
    windows = windows.to(model_device(model))  # (count, context + 1)
    losses = [next_token_loss(model, windows[i : i + batch]).item() for i in range(0, len(windows), batch)]
    model.train()
    return sum(losses) / len(losses)


class Checkpoint:
    """``checkpoint.pt`` in the run directory, written atomically; ``spec_json`` names what it trains."""

    def __init__(self, run_dir: Path, spec_json: str) -> None:
        self.path, self.spec_json = run_dir / "checkpoint.pt", spec_json

    def load(self, model, optimizer) -> tuple[int, float]:
        if not self.path.is_file():
            return 0, 0.0
        state = self._read()
        if state["spec"] != self.spec_json:
            raise CocaEvalError(f"{self.path} was made by a different zoo spec; move it away to start over")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        return int(state["step"]), float(state["seconds"])

    def _read(self) -> dict:
        """The checkpoint's state; a truncated or foreign file is one line (move it away to restart)."""
        try:
            state = torch.load(self.path, weights_only=True, map_location="cpu")
        except Exception as exc:  # any failure to parse the file is a damaged file, not a bug
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise CocaEvalError(
                f"{self.path} cannot be read ({reason}); move it away to train from the start"
            ) from None
        if not isinstance(state, dict) or not {"spec", "model", "optimizer", "step", "seconds"} <= set(state):
            raise CocaEvalError(f"{self.path} is not a zoo checkpoint; move it away to train from the start")
        return state

    def save(self, model, optimizer, step: int, seconds: float) -> None:
        state = {
            "spec": self.spec_json,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "step": step,
            "seconds": seconds,
        }
        tmp = self.path.with_suffix(".tmp")
        torch.save(state, tmp)
        tmp.replace(self.path)


def train(spec: ZooSpec, run_dir: Path, data: ZooData | None = None, device: str = "cpu") -> Path:
    """Train (or finish training) ``spec`` into ``run_dir`` on ``device``; returns the saved model
    directory. The batches are the same on every device; the weights agree only to rounding."""
    run_dir.mkdir(parents=True, exist_ok=True)
    data = data or ZooData.load(spec.architecture.vocab_size, spec.recipe.extra_books)
    stream = TrainingStream(spec.recipe, data.tokenizer, data.train_texts)
    torch.manual_seed(spec.recipe.seed)
    tok = data.tokenizer
    model = build_model(spec, tok.eos_token_id, tok.pad_token_id).to(resolve_device(device))
    seconds, entries = fit(model, spec.recipe, stream, run_dir, spec.model_dump_json(), spec.name)

    heldout = heldout_loss(model, data.heldout_windows(spec.recipe))
    spec_data = spec.model_dump(mode="json")
    return save_trained(spec_data, spec.recipe, run_dir, model, data, entries, seconds, heldout)


def fit(model, recipe: Recipe, stream: TrainingStream, run_dir: Path, spec_json: str, name: str):
    """``recipe.steps`` optimiser steps on the model's trainable parameters, checkpointed in ``run_dir``
    and resumed from there; returns (seconds spent in steps, the loss log's entries)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    model.train()
    optimizer = make_optimizer(model, recipe)
    ckpt = Checkpoint(run_dir, spec_json)
    start, seconds = ckpt.load(model, optimizer)
    log = _TrainLog(run_dir / "train_log.jsonl", keep_through=start)
    reporter = StepReporter(name, recipe.steps, start)
    tokens_per_step = recipe.batch_size * recipe.context
    bf16 = use_bf16_autocast(recipe.bf16_autocast, model_device(model))
    if recipe.bf16_autocast and not bf16 and start < recipe.steps:
        reporter.note("bf16 autocast off: no native bf16 here, where emulating it is slower than fp32")
    with reporter:
        for step in range(start, recipe.steps):
            began = time.perf_counter()
            rows, lr = stream.batch(step).to(model_device(model)), lr_at(recipe, step)  # (b, n + 1)
            loss = train_step(model, optimizer, rows, lr, recipe.grad_clip, bf16)
            seconds += time.perf_counter() - began
            done = step + 1
            if done % LOG_EVERY == 0 or done == recipe.steps:
                log.write({"step": done, "loss": loss, "lr": lr_at(recipe, step), "seconds": seconds})
            reporter.update(done, loss, done * tokens_per_step / max(seconds, 1e-9))
            if done % recipe.checkpoint_every == 0 or done == recipe.steps:
                ckpt.save(model, optimizer, done, seconds)
    return seconds, log.entries()


class _TrainLog:
    """Append-only JSONL of logged steps; on resume, lines past the checkpoint are dropped first."""

    def __init__(self, path: Path, keep_through: int) -> None:
        self.path = path
        kept = [e for e in self.entries() if e["step"] <= keep_through]
        path.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")

    def entries(self) -> list[dict]:
        if not self.path.is_file():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]

    def write(self, entry: dict) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
