"""What a zoo model is: one shared training recipe and architecture, and the position scheme that varies.

The CoCA paper's from-scratch comparison (Tables 1-3) and the p-RoPE paper's Table 2 compare models
trained identically except for position handling. ``ZooSpec`` states exactly that: everything in
``Recipe`` and ``Architecture`` is shared by default, and ``position`` (with its two knobs) is the one
thing a zoo entry changes. A user's own variant is the same model written as a YAML file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from coca_eval.zoo.names import name_problem

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
    context: int = Field(512, gt=1)
    batch_size: int = Field(64, gt=0)
    steps: int = Field(3000, gt=0)
    peak_lr: float = Field(4e-3, gt=0.0)
    start_lr: float = Field(1e-7, ge=0.0)
    final_lr_ratio: float = Field(0.1, ge=0.0)
    warmup_fraction: float = Field(0.01, ge=0.0, le=1.0)
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = Field(0.0, ge=0.0)
    grad_clip: float = Field(1.0, gt=0.0)
    passkey_fraction: float = Field(0.25, ge=0.0, le=1.0)
    copy_fraction: float = Field(0.0, ge=0.0, le=1.0)  # rows of a random segment repeated (a variant's knob)
    copy_warmup_steps: int = Field(0, ge=0)  # the first steps train on copy rows only (a variant's knob)
    extra_books: bool = False  # also train on the train-extra books (zoo/corpus.py): fewer passes
    checkpoint_every: int = Field(100, gt=0)
    bf16_autocast: bool = True  # where the hardware has bf16 (zoo/hardware.py): 1.38x on AVX-512, off on AVX2
    eval_windows: int = Field(32, gt=0)

    @model_validator(mode="after")
    def _fractions_fit(self) -> Recipe:
        if self.passkey_fraction + self.copy_fraction > 1.0:
            raise ValueError("passkey_fraction + copy_fraction must be at most 1")
        return self

    @field_validator("betas")
    @classmethod
    def _betas_in_range(cls, betas: tuple[float, float]) -> tuple[float, float]:
        """AdamW's moment decays: outside [0, 1) torch refuses them mid-run or the moments diverge."""
        if not all(0.0 <= beta < 1.0 for beta in betas):
            raise ValueError(f"each of betas {list(betas)} must be in [0, 1)")
        return betas


class Architecture(BaseModel):
    """A LLaMA-style decoder (RMSNorm, SwiGLU, untied nothing but the embeddings). Six layers of width
    160 with heads of 32, chosen for recipe v4 and kept by v5: of the shapes that trained in under 30 CPU
    minutes on v4's budget, the one whose RoPE model's perplexity rose most past its window, for every
    seed tried (``docs/zoo.md``, "History of the recipe", v4)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vocab_size: int = Field(512, gt=0)  # small: the models lean on their context (4096 left them near-bigram)
    hidden_size: int = Field(160, gt=0)
    intermediate_size: int = Field(480, gt=0)
    num_hidden_layers: int = Field(6, gt=0)
    num_attention_heads: int = Field(5, gt=0)
    rope_theta: float = Field(10000.0, gt=0.0)

    @model_validator(mode="after")
    def _heads_divide_width(self) -> Architecture:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"num_attention_heads {self.num_attention_heads} must divide hidden_size {self.hidden_size}"
            )
        return self


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

    @field_validator("name")
    @classmethod
    def _name_is_a_folder(cls, name: str) -> str:
        return folder_name(name)


def folder_name(name: str) -> str:
    """A spec's name becomes ``OUT/NAME``: refuse one that is a path (see zoo/names.py)."""
    if (problem := name_problem(name)) is not None:
        raise ValueError(problem)
    return name


def lr_at(recipe: Recipe, step: int) -> float:
    """Learning rate for optimiser step ``step`` (0-based): linear warm-up, then linear decay."""
    warmup = max(1, round(recipe.warmup_fraction * recipe.steps))
    if step < warmup:
        return recipe.start_lr + (recipe.peak_lr - recipe.start_lr) * step / warmup
    progress = (step - warmup) / max(1, recipe.steps - warmup)
    return recipe.peak_lr * (1 - (1 - recipe.final_lr_ratio) * progress)
