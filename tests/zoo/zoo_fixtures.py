"""A micro zoo: the real recipe and code paths at sizes that train in seconds."""

from __future__ import annotations

from tiny_models import tiny_corpus_text

from coca_eval.zoo.recipe import Architecture, Recipe, ZooSpec
from coca_eval.zoo.tokenizer import train_tokenizer
from coca_eval.zoo.training_data import ZooData

MICRO_ARCH = Architecture(
    vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2
)


def micro_data() -> ZooData:
    train, heldout = tiny_corpus_text(n_docs=3, seed=2), tiny_corpus_text(n_docs=2, seed=3)
    tokenizer = train_tokenizer(train, MICRO_ARCH.vocab_size)
    return ZooData(tokenizer, train, heldout, {"micro": "0" * 64})


def micro_spec(position: str = "rope", steps: int = 6, **fields) -> ZooSpec:
    recipe = Recipe(
        steps=steps,
        batch_size=2,
        context=32,
        checkpoint_every=2,
        eval_windows=2,
        passkey_fraction=0,
        copy_warmup_steps=0,
    )
    return ZooSpec(
        name=f"micro-{position}",
        label="micro",
        description="micro",
        position=position,
        recipe=recipe,
        architecture=MICRO_ARCH,
        **fields,
    )
