"""The zoo's shipped checkpoints as model presets, so ``--model zoo-rope`` works in every task and backend.

Registering reads no weights and imports no torch: the fingerprint hashes the shipped ``zoo.json``
(which names the recipe, data and losses) and the safetensors file's size and name.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import ModelPreset
from coca_eval.zoo.catalog import ZOO, shipped_dir
from coca_eval.zoo.finetune_catalog import FINETUNES, root_entry
from coca_eval.zoo.memory import parameter_count

PAPER_ROWS = {
    "zoo-rope": {"dynamic:4": "RoFormer + dynamic NTK"},
    "zoo-coca-slack": {"dynamic:4": "RoFormer + dynamic NTK & CoCA"},
}
"""The CoCA paper's Table 1/2 names of the zoo's rows under dynamic NTK x4 (the zoo presets' labels), so
``--model zoo-coca-slack --rope dynamic:4`` names its row as the ``zoo`` preset does."""


def _materialize(name: str) -> Path:
    path = shipped_dir(name)
    if path is None:
        raise CocaEvalError(
            f"{name} ships no trained weights in this install; train it with `coca-eval zoo train {name}` "
            f"and pass --model runs/zoo/{name}/model"
        )
    return path


def _fingerprint(name: str) -> str:
    path = shipped_dir(name)
    if path is None:
        return f"zoo:{name}:untrained"
    digest = hashlib.sha256((path / "zoo.json").read_bytes())
    for weights in sorted(path.glob("*.safetensors")):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
    return f"zoo:{digest.hexdigest()}"


def zoo_presets() -> list[tuple[str, ModelPreset]]:
    """One model preset per zoo entry and fine-tune, by name."""
    entries = [(name, spec.label, spec.description, spec.recipe.context, spec) for name, spec in ZOO.items()]
    for name, tune in FINETUNES.items():
        entries.append((name, tune.label, tune.description, tune.recipe.context, ZOO[root_entry(name)]))
    return [
        (
            name,
            ModelPreset(
                name=name,
                display_name=label,
                description=f"zoo: {description}; trained here at {context} tokens",
                params=_parameter_count(architecture_of),
                trained_context=context,
                materialize=lambda n=name: _materialize(n),
                fingerprint=_fingerprint(name),
                prompt_starts_with_bos=True,  # every training document followed <|endoftext|>
                config_dir=lambda n=name: shipped_dir(n),
                rope_labels=PAPER_ROWS.get(name, {}),
            ),
        )
        for name, label, description, context, architecture_of in entries
    ]


def _parameter_count(spec) -> str:
    return f"{parameter_count(spec.architecture) / 1e6:.1f}M"
