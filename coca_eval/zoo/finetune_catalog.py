"""The zoo's fine-tuned entries: the CoCA paper's "Fine-tuning LLM" rows and its Table 4, in miniature.

Budgets are sized for at most 15 minutes each on a 2-core machine. The peak learning rate is an eighth
of pre-training's, as fine-tuning usually is; the rows mix passkey examples in the pre-training share
(the recipe's default). At these budgets the fine-tunes still lost the retrieval their base had
learned (``reports/zoo/README.md``, the passkey claims).
"""

from __future__ import annotations

from coca_eval.zoo.finetune import FineTuneSpec, Stage
from coca_eval.zoo.names import catalog, look_up
from coca_eval.zoo.recipe import Recipe

SHORT = Recipe(context=512, batch_size=8, steps=1, peak_lr=5e-4, warmup_fraction=0.05)
LONG = Recipe(context=2048, batch_size=2, steps=1, peak_lr=5e-4, warmup_fraction=0.05)
PI_STEPS = 400


def _pi_finetune(name: str, label: str, base: str) -> FineTuneSpec:
    """Table 4's pair differ only in their base: Position Interpolation x4, fine-tuned at 2048 tokens."""
    return FineTuneSpec(
        name=name,
        label=label,
        description=f"{base} with Position Interpolation x4, fine-tuned at 2048 tokens",
        base=base,
        pi_factor=4.0,
        stages=(Stage(steps=PI_STEPS),),
        recipe=LONG,
    )


def root_entry(name: str) -> str:
    """The from-scratch zoo entry a chain of fine-tunes starts from (``name`` itself if it is one)."""
    while name in FINETUNES:
        name = FINETUNES[name].base
    return name


FINETUNES: dict[str, FineTuneSpec] = catalog(
    FineTuneSpec(
        name="zoo-rope-ft-coca",
        label="RoFormer → CoCA (fine-tuned)",
        description="zoo-rope converted to CoCA (t_proj from k_proj), fine-tuned in the paper's three "
        "stages: t_proj, then q/t/v, then all",
        base="zoo-rope",
        to_coca="slack",
        stages=(
            Stage(trainable=("t_proj",), steps=300),
            Stage(trainable=("q_proj", "t_proj", "v_proj"), steps=300),
            Stage(steps=300),
        ),
        recipe=SHORT,
    ),
    _pi_finetune("zoo-rope-ft-pi", "RoFormer + PI", "zoo-rope"),
    _pi_finetune("zoo-rope-ft-coca-pi", "RoFormer + CoCA & PI", "zoo-rope-ft-coca"),
)


def finetune_spec(name: str) -> FineTuneSpec:
    return look_up(FINETUNES, name, "zoo fine-tune")
