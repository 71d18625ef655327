"""Whether a zoo model can train in this machine's memory at all, worked out from its sizes alone.

A spec with a width of a million, or a batch of a hundred thousand rows, is valid YAML and passes every
range check, yet the first ``torch.empty`` it reaches asks for terabytes: the process is killed (or the
machine swaps for hours) after the run folder and its books were set up. So before any tensor exists the
spec's sizes give a *lower bound* of what training holds at once, and a bound above the machine's
physical memory is refused in one line. Being a lower bound, it never refuses a spec that would fit; a
spec that passes may still run out of memory, which torch reports as it always has.

The bound counts what training cannot avoid holding:

- every parameter four times, in fp32 (``make_optimizer`` keeps the weights in fp32 under bf16
  autocast too): the weight, its gradient and AdamW's two moments, 16 bytes;
- the activations autograd saves for one batch: per token and layer at least the attention's input,
  query, key and value (4 x width) and the MLP's gate, up and product (3 x intermediate), at two bytes
  (bf16, the narrowest autocast uses), and the fp32 logits the loss is taken from (vocabulary x 4).

Attention scores (context squared per head) are left out: a fused attention never materialises them.
"""

from __future__ import annotations

from dataclasses import dataclass

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.finetune import FineTuneSpec
from coca_eval.zoo.recipe import Architecture, Recipe, ZooSpec

BYTES_PER_TRAINED_PARAMETER = 16  # fp32 weight, gradient and AdamW's two moments
BYTES_PER_SAVED_ACTIVATION = 2  # bf16, the narrowest that autocast computes in
BYTES_PER_LOGIT = 4  # the loss is taken in fp32 (train.next_token_loss)


@dataclass(frozen=True)
class TrainingFootprint:
    """The least memory one training step of a spec holds, split as the refusal explains it."""

    parameters: int
    state_bytes: int  # weights, gradients and optimiser state
    activation_bytes: int  # what one batch's forward keeps for the backward pass
    batch_tokens: int

    @property
    def total_bytes(self) -> int:
        return self.state_bytes + self.activation_bytes


def parameter_count(arch: Architecture) -> int:
    """The decoder's parameters as ``zoo/build.py`` builds it (tied embeddings; every position scheme has
    the same weights, CoCA's ``t_proj`` being the key projection renamed)."""
    width, inner = arch.hidden_size, arch.intermediate_size
    per_layer = 4 * width * width + 3 * width * inner + 2 * width  # attention, SwiGLU, two RMSNorms
    return arch.vocab_size * width + arch.num_hidden_layers * per_layer + width


def training_footprint(arch: Architecture, recipe: Recipe) -> TrainingFootprint:
    """The lower bound of the module docstring for ``arch`` trained with ``recipe``'s batches."""
    parameters = parameter_count(arch)
    tokens = recipe.batch_size * recipe.context
    per_layer = 4 * arch.hidden_size + 3 * arch.intermediate_size
    per_token = arch.num_hidden_layers * per_layer * BYTES_PER_SAVED_ACTIVATION
    per_token += arch.vocab_size * BYTES_PER_LOGIT
    return TrainingFootprint(parameters, parameters * BYTES_PER_TRAINED_PARAMETER, tokens * per_token, tokens)


def check_training_fits(spec: ZooSpec | FineTuneSpec, memory: int | None, where: str) -> None:
    """``check_fits`` for a zoo entry or variant, or a fine-tune (its shape is its base's)."""
    if isinstance(spec, ZooSpec):
        arch = spec.architecture
    else:
        from coca_eval.zoo.catalog import ZOO
        from coca_eval.zoo.finetune_catalog import root_entry

        arch = ZOO[root_entry(spec.base)].architecture
    check_fits(spec.name, arch, spec.recipe, memory, where)


def check_fits(name: str, arch: Architecture, recipe: Recipe, memory: int | None, where: str) -> None:
    """Refuse, in one line, a spec whose least training footprint exceeds ``memory`` bytes of ``where``
    (``cpu`` or a GPU's name); an unknown ``memory`` is not checked."""
    need = training_footprint(arch, recipe)
    if memory is None or need.total_bytes <= memory:
        return
    raise CocaEvalError(
        f"{name} cannot train in this machine's memory: it needs at least {_size(need.total_bytes)} "
        f"(weights, gradients and AdamW state of {need.parameters:,} parameters: {_size(need.state_bytes)}; "
        f"activations of a {recipe.batch_size} x {recipe.context} token batch: "
        f"{_size(need.activation_bytes)}), more than the {_size(memory)} of {where}; "
        "shrink the architecture, batch_size or context"
    )


def _size(count: int) -> str:
    """Bytes as a reader compares them: ``1.5 GiB``, ``3.2 TiB``."""
    value, unit = float(count), "B"
    for larger in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    return f"{value:.1f} {unit}"
