"""Zoo entries are model presets: shipped ones load by name, untrained ones say how to train them."""

from __future__ import annotations

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import MODEL_PRESETS, resolve_model
from coca_eval.zoo.catalog import ZOO
from coca_eval.zoo.shipped import shipped_dir


def test_every_zoo_entry_is_a_preset_trained_at_512():
    for name in ZOO:
        preset = MODEL_PRESETS.get(name)
        assert preset.trained_context == 512 and preset.display_name == ZOO[name].label


@pytest.mark.parametrize("name", [n for n in ZOO if shipped_dir(n)])
def test_a_shipped_entry_resolves_to_its_checkpoint_and_loads(name):
    from transformers import AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types

    path, fingerprint = resolve_model(name)
    assert fingerprint.startswith("zoo:") and fingerprint != f"zoo:{name}:untrained"
    register_model_types()
    model = AutoModelForCausalLM.from_pretrained(path)
    assert model.config.max_position_embeddings == 512


@pytest.mark.parametrize("name", [n for n in ZOO if not shipped_dir(n)])
def test_an_untrained_entry_says_how_to_train_it(name):
    with pytest.raises(CocaEvalError, match=f"coca-eval zoo train {name}"):
        resolve_model(name)
