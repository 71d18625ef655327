"""What a zoo model is: one shared training recipe and architecture, and the position scheme that varies.

The CoCA paper's from-scratch comparison (Tables 1-3) and the p-RoPE paper's Table 2 compare models
trained identically except for position handling. ``ZooSpec`` states exactly that: everything in
``Recipe`` and ``Architecture`` is shared by default, and ``position`` (with its two knobs) is the one
thing a zoo entry changes. A user's own variant is the same model written as a YAML file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Position = Literal["rope", "coca", "alibi", "prope"]


class Recipe(BaseModel):
    """Optimisation shared by every zoo model (CoCA paper §4.3: AdamW β = (0.9, 0.95), a linear warm-up
    over 1 % of the steps from 1e-7, then linear decay to a tenth of the peak). The peak rate is sized
    for models of about a million parameters rather than the paper's 1e-4 for 350M, and there is no
    weight decay (the paper states none): with weight decay 0.1 at half the rate the RoPE model's
    perplexity rose 2.6x from 512 to 4096 tokens, without it 4.2x.

    Recipe v5: 3000 steps of 64 rows, a quarter of them passkey examples. Retrieval forms abruptly
    (answer digits from chance to 0.9 between steps 1250 and 1500 of this schedule); of ten schedules
    and mixes run side by side on a GPU, only this one taught it, and none with a tenth passkey rows,
    with batches of 8 to 32, or within the 9.8M tokens recipe v4 trained on in 25 CPU minutes
    (``docs/zoo.md``, "History of the recipe", v5). 98M tokens is about 34 passes over the training books,
    so the in-window perplexity on held-out books is higher than v4's; on a 2-core CPU a model takes
    hours, on one GPU minutes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    context: int = 512
    batch_size: int = 64
    steps: int = 3000
    peak_lr: float = 4e-3
    start_lr: float = 1e-7
    final_lr_ratio: float = 0.1
    warmup_fraction: float = 0.01
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    passkey_fraction: float = Field(0.25, ge=0.0, le=1.0)
    copy_fraction: float = Field(0.0, ge=0.0, le=1.0)  # rows of a random segment repeated (a variant's knob)
    copy_warmup_steps: int = Field(0, ge=0)  # the first steps train on copy rows only (a variant's knob)
    extra_books: bool = False  # also train on the train-extra books (zoo/corpus.py): fewer passes
    checkpoint_every: int = 100
    bf16_autocast: bool = True  # where the hardware has bf16 (zoo/hardware.py): 1.38x on AVX-512, off on AVX2
    eval_windows: int = 32

    @model_validator(mode="after")
    def _fractions_fit(self) -> Recipe:
        if self.passkey_fraction + self.copy_fraction > 1.0:
            raise ValueError("passkey_fraction + copy_fraction must be at most 1")
        return self


class Architecture(BaseModel):
    """A LLaMA-style decoder (RMSNorm, SwiGLU, untied nothing but the embeddings). Six layers of width
    160 with heads of 32, chosen for recipe v4 and kept by v5: of the shapes that trained in under 30 CPU
    minutes on v4's budget, the one whose RoPE model's perplexity rose most past its window, for every
    seed tried (``docs/zoo.md``, "History of the recipe", v4)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vocab_size: int = 512  # small: the models learn to lean on their context (4096 left them near-bigram)
    hidden_size: int = 160
    intermediate_size: int = 480
    num_hidden_layers: int = 6
    num_attention_heads: int = 5
    rope_theta: float = 10000.0


class ZooSpec(BaseModel):
    """One zoo entry: a name, the row label the papers use, and its position handling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    description: str
    position: Position
    coca_variant: Literal["slack", "strict"] = "slack"
    rope_fraction: float = Field(1.0, ge=0.0, le=1.0)
    recipe: Recipe = Recipe()
    architecture: Architecture = Architecture()


def lr_at(recipe: Recipe, step: int) -> float:
    """Learning rate for optimiser step ``step`` (0-based): linear warm-up, then linear decay."""
    warmup = max(1, round(recipe.warmup_fraction * recipe.steps))
    if step < warmup:
        return recipe.start_lr + (recipe.peak_lr - recipe.start_lr) * step / warmup
    progress = (step - warmup) / max(1, recipe.steps - warmup)
    return recipe.peak_lr * (1 - (1 - recipe.final_lr_ratio) * progress)
