"""Zoo entries are model presets: shipped ones load by name, untrained ones say how to train them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import MODEL_PRESETS, resolve_model
from coca_eval.zoo.catalog import ZOO, shipped_dir
from coca_eval.zoo.finetune_catalog import FINETUNES


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


def test_every_zoo_entry_and_fine_tune_ships_with_fp16_weights():
    import json

    from coca_eval.zoo.finetune_catalog import FINETUNES

    for name in [*ZOO, *FINETUNES]:
        meta = json.loads((shipped_dir(name) / "zoo.json").read_text())
        assert meta["stored_dtype"] == "float16" and meta["spec"]["name"] == name


@pytest.mark.parametrize("name", list(ZOO))
def test_an_untrained_entry_says_how_to_train_it(name, monkeypatch, tmp_path):
    from coca_eval.zoo import catalog

    monkeypatch.setattr(catalog, "CHECKPOINTS", tmp_path)  # an install without the weights
    with pytest.raises(CocaEvalError, match=f"coca-eval zoo train {name}"):
        resolve_model(name)


@pytest.mark.parametrize("name", [n for n in [*ZOO, *FINETUNES] if shipped_dir(n)])
def test_a_shipped_tokenizer_knows_the_document_start_but_does_not_add_it(name):
    """``<|endoftext|>`` separated the training documents, so it is the BOS a passkey prompt gets with
    ``--bos always``; perplexity windows (``--bos auto``) stay as they were trained, without it."""
    from transformers import AutoTokenizer

    from coca_eval.backends.special_tokens import tokenizer_adds_bos

    tokenizer = AutoTokenizer.from_pretrained(shipped_dir(name))
    assert tokenizer.bos_token == tokenizer.eos_token == "<|endoftext|>"
    assert not tokenizer_adds_bos(tokenizer)


def test_a_zoo_prompt_starts_with_the_document_start_under_auto():
    """The zoo presets declare that their training documents followed BOS: ``--bos auto`` (the default)
    puts it in front of their passkey prompts and not of another model's; their cells are keyed apart
    from a reading without it."""
    from transformers import AutoTokenizer

    from coca_eval.methods import MethodSpec
    from coca_eval.passkey.params import make_passkey_params
    from coca_eval.passkey.prompts import PasskeySample
    from coca_eval.passkey.task import PasskeyTask, prompt_builder

    tokenizer = AutoTokenizer.from_pretrained(shipped_dir("zoo-rope"))
    backend = SimpleNamespace(
        adds_bos=False,
        bos_token_id=tokenizer.bos_token_id,
        encode=lambda text: tokenizer(text, add_special_tokens=False).input_ids,
    )
    auto = make_passkey_params({})
    zoo = prompt_builder(auto, backend, "zoo-rope").build(PasskeySample(0, 12345, 0.5), 300)
    other = prompt_builder(auto, backend, "smollm2-135m").build(PasskeySample(0, 12345, 0.5), 300)
    assert zoo.ids[0] == tokenizer.bos_token_id == tokenizer.eos_token_id
    assert other.ids[0] != tokenizer.bos_token_id
    task = PasskeyTask(auto, journal=None, progress=None)
    never = PasskeyTask(make_passkey_params({"bos": "never"}), journal=None, progress=None)
    zoo_method = MethodSpec(model="zoo-rope", label="RoFormer")
    assert task.cell_key(zoo_method, "w", 512) != never.cell_key(zoo_method, "w", 512)
