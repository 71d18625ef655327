"""Fine-tuning stages: frozen parameters stay put, conversion to CoCA and PI scaling are applied,
and the result is a loadable zoo checkpoint that records every stage."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file
from zoo_fixtures import micro_data, micro_spec

from coca_eval.errors import CocaEvalError
from coca_eval.models.presets import MODEL_PRESETS
from coca_eval.zoo.finetune import FineTuneSpec, Stage, finetune, set_trainable
from coca_eval.zoo.finetune_catalog import FINETUNES
from coca_eval.zoo.recipe import Recipe
from coca_eval.zoo.train import train


@pytest.fixture(scope="module")
def data():
    return micro_data()


@pytest.fixture(scope="module")
def base(tmp_path_factory, data):
    return train(micro_spec(), tmp_path_factory.mktemp("base"), data)


def _spec(**fields) -> FineTuneSpec:
    recipe = Recipe(steps=1, batch_size=2, context=32, checkpoint_every=2, eval_windows=2, passkey_fraction=0)
    defaults = {"name": "ft", "label": "ft", "description": "ft", "base": "micro-rope", "recipe": recipe}
    return FineTuneSpec(**{**defaults, **fields})


def test_three_stage_coca_fine_tune_moves_only_each_stages_parameters(tmp_path, data, base):
    spec = _spec(
        to_coca="slack",
        stages=(
            Stage(trainable=("t_proj",), steps=2),
            Stage(trainable=("q_proj", "t_proj", "v_proj"), steps=2),
        ),
    )
    out = finetune(spec, tmp_path / "ft", base, data)
    before, after = load_file(base / "model.safetensors"), load_file(out / "model.safetensors")
    t_keys = [k for k in after if "t_proj" in k]
    assert t_keys and not any("k_proj" in k for k in after)
    assert all(not torch.equal(after[k], before[k.replace("t_proj", "k_proj")]) for k in t_keys)
    frozen = [k for k in after if any(p in k for p in ("o_proj", "mlp", "norm", "embed"))]
    assert frozen and all(torch.equal(after[k], before[k]) for k in frozen)
    assert json.loads((out / "config.json").read_text())["model_type"] == "coca_llama"
    meta = json.loads((out / "zoo.json").read_text())
    assert meta["steps"] == 4 and meta["spec"]["to_coca"] == "slack"
    stages = [
        json.loads(line)["stage"] for line in (tmp_path / "ft" / "train_log.jsonl").read_text().splitlines()
    ]
    assert set(stages) == {1, 2}


def test_pi_fine_tune_sets_linear_scaling_and_the_new_context(tmp_path, data, base):
    from transformers import AutoConfig

    long = Recipe(steps=1, batch_size=1, context=64, checkpoint_every=2, eval_windows=2, passkey_fraction=0)
    out = finetune(_spec(pi_factor=4.0, stages=(Stage(steps=2),), recipe=long), tmp_path / "pi", base, data)
    config = AutoConfig.from_pretrained(out)
    assert config.rope_parameters["rope_type"] == "linear" and config.rope_parameters["factor"] == 4.0
    assert config.max_position_embeddings == 64
    assert (base / "config.json").read_text().count("linear") == 0  # the base is never edited


def test_a_stage_matching_nothing_is_refused(data, base):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base)
    with pytest.raises(CocaEvalError, match="matches no parameter"):
        set_trainable(model, Stage(trainable=("no_such_weight",), steps=1))


def test_a_base_from_another_tokenizer_is_refused(tmp_path, data, base):
    meta = json.loads((base / "zoo.json").read_text())
    other = tmp_path / "other"
    other.mkdir()
    (other / "zoo.json").write_text(json.dumps({**meta, "tokenizer_sha256": "0" * 64}))
    with pytest.raises(CocaEvalError, match="another tokenizer"):
        finetune(_spec(stages=(Stage(steps=1),)), tmp_path / "x", other, data)


def test_the_catalog_follows_the_paper():
    coca = FINETUNES["zoo-rope-ft-coca"]
    assert coca.base == "zoo-rope" and coca.to_coca == "slack" and coca.recipe.context == 512
    assert [s.trainable for s in coca.stages] == [("t_proj",), ("q_proj", "t_proj", "v_proj"), ()]
    for name in ("zoo-rope-ft-pi", "zoo-rope-ft-coca-pi"):
        assert FINETUNES[name].pi_factor == 4.0 and FINETUNES[name].recipe.context == 2048
        assert MODEL_PRESETS.get(name).trained_context == 2048
    assert FINETUNES["zoo-rope-ft-coca-pi"].base == "zoo-rope-ft-coca"
