"""The memory bound of a zoo spec: a true lower bound of what training holds, met by every shipped spec."""

from __future__ import annotations

import pytest
import torch
from zoo_fixtures import micro_spec

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.build import build_model
from coca_eval.zoo.catalog import ZOO
from coca_eval.zoo.finetune_catalog import FINETUNES
from coca_eval.zoo.hardware import system_memory_bytes
from coca_eval.zoo.memory import (
    check_fits,
    check_training_fits,
    parameter_count,
    training_footprint,
)
from coca_eval.zoo.train import next_token_loss

GIB = 1024**3


@pytest.mark.parametrize("position", ["rope", "coca", "alibi", "prope"])
def test_the_parameter_count_is_the_built_models(position):
    """Every position scheme has the same weights (CoCA's t_proj is the key projection renamed)."""
    spec = micro_spec(position)
    built = sum(p.numel() for p in build_model(spec, eos_id=0, pad_id=1).parameters())
    assert parameter_count(spec.architecture) == built


@pytest.mark.parametrize("bf16", [False, True], ids=["fp32", "bf16-autocast"])
def test_the_activation_bound_is_below_what_autograd_saves(bf16):
    """Every tensor autograd keeps for the backward pass of one micro batch, weights excluded: the
    bound may not exceed it, or a spec that fits could be refused."""
    spec = micro_spec("rope")
    model = build_model(spec, eos_id=0, pad_id=1)
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    rows = torch.randint(0, spec.architecture.vocab_size, (spec.recipe.batch_size, spec.recipe.context + 1))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        next_token_loss(model, rows, bf16=bf16)
    assert 0 < training_footprint(spec.architecture, spec.recipe).activation_bytes <= sum(saved.values())


@pytest.mark.parametrize("name", [*ZOO, *FINETUNES])
def test_every_shipped_spec_fits_a_small_machine(name):
    """The shipped recipes train on a 4 GiB laptop as far as this bound can tell."""
    check_training_fits(ZOO.get(name) or FINETUNES[name], 4 * GIB, "a 4 GiB laptop")


def test_a_spec_beyond_the_memory_is_refused_with_its_sizes():
    spec = micro_spec("rope")
    need = training_footprint(spec.architecture, spec.recipe).total_bytes
    check_fits(spec.name, spec.architecture, spec.recipe, need, "exactly enough")
    check_fits(spec.name, spec.architecture, spec.recipe, None, "an unknown machine")
    with pytest.raises(CocaEvalError, match=r"micro-rope cannot train .* a 2 x 32 token batch.* too little"):
        check_fits(spec.name, spec.architecture, spec.recipe, need - 1, "too little")


def test_this_machine_reports_its_memory():
    memory = system_memory_bytes()
    assert memory is not None and memory > 64 * 1024**2
