"""The CoCA paper's fine-tuning half in miniature: a trained zoo model continued in stages.

``zoo-rope-ft-coca`` is ``zoo-rope`` converted with ``coca-eval convert --from-llama`` (t_proj starts
as the old k_proj) and fine-tuned in the paper's three stages (§4.3): t_proj only, then q/t/v, then
everything, at the training context. ``zoo-rope-ft-pi`` and ``zoo-rope-ft-coca-pi`` are the Table 4
pair: the RoPE model, and the CoCA-converted one, read with Position Interpolation ×4 and fine-tuned at
4× the context (2048 tokens). Each stage is an ordinary zoo run (checkpoints, resume, loss log) in its
own directory, started from the previous stage's weights.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from coca_eval.errors import CocaEvalError
from coca_eval.zoo.names import run_dir_under
from coca_eval.zoo.recipe import Recipe, folder_name


class Stage(BaseModel):
    """Parameters whose names contain any of ``trainable`` are updated (empty: all of them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trainable: tuple[str, ...] = ()
    steps: int = Field(gt=0)


class FineTuneSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str
    description: str
    base: str  # a zoo entry (or another fine-tune) whose trained weights this starts from
    to_coca: Literal["slack", "strict"] | None = None  # convert from LLaMA first
    pi_factor: float | None = Field(None, gt=1.0)  # linear RoPE scaling (Position Interpolation)
    stages: tuple[Stage, ...] = Field(min_length=1)
    recipe: Recipe  # shared by the stages; ``steps`` is replaced by each stage's

    @field_validator("name")
    @classmethod
    def _name_is_a_folder(cls, name: str) -> str:
        return folder_name(name)

    def stage_recipe(self, index: int) -> Recipe:
        return self.recipe.model_copy(update={"steps": self.stages[index].steps})

    @property
    def steps(self) -> int:
        return sum(stage.steps for stage in self.stages)


def set_trainable(model, stage: Stage) -> int:
    """Freeze every parameter outside the stage; returns how many parameters stay trainable."""
    count = 0
    for name, param in model.named_parameters():
        param.requires_grad = not stage.trainable or any(part in name for part in stage.trainable)
        count += param.numel() if param.requires_grad else 0
    if count == 0:
        raise CocaEvalError(f"fine-tuning stage {stage.trainable} matches no parameter")
    return count


def starting_checkpoint(spec: FineTuneSpec, base_dir: Path, work: Path) -> Path:
    """A copy of the base checkpoint in ``work``, converted to CoCA and given PI scaling as the spec
    asks, with the fine-tuning context as its ``max_position_embeddings``."""
    from coca_eval.models.convert import convert_from_llama

    start = work / "start"
    if spec.to_coca:
        convert_from_llama(base_dir, start, spec.to_coca)
    else:
        shutil.copytree(base_dir, start)
    config_path = start / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["max_position_embeddings"] = spec.recipe.context
    if spec.pi_factor:
        theta = config.get("rope_parameters", {}).get("rope_theta", 10000.0)
        config["rope_parameters"] = {"rope_type": "linear", "factor": spec.pi_factor, "rope_theta": theta}
    config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return start


def finetune(spec: FineTuneSpec, run_dir: Path, base_dir: Path, data, device: str = "cpu") -> Path:
    """Run every stage of ``spec`` from ``base_dir``'s weights on ``device``; returns the final model
    directory."""
    import torch
    from transformers import AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types
    from coca_eval.zoo.artifact import save_trained
    from coca_eval.zoo.batches import TrainingStream
    from coca_eval.zoo.hardware import resolve_device
    from coca_eval.zoo.train import fit, heldout_loss

    register_model_types()
    _check_tokenizer(base_dir, data)
    stream = TrainingStream(spec.recipe, data.tokenizer, data.train_texts)
    with tempfile.TemporaryDirectory() as tmp:
        start = starting_checkpoint(spec, base_dir, Path(tmp))
        model = AutoModelForCausalLM.from_pretrained(start, dtype=torch.float32, trust_remote_code=False)
    model.to(resolve_device(device))
    spent, log, before = 0.0, [], 0
    for index, stage in enumerate(spec.stages):
        set_trainable(model, stage)
        stage_key = f"{spec.model_dump_json()} stage {index + 1}"
        recipe = spec.stage_recipe(index)
        stage_dir = run_dir_under(run_dir, f"stage-{index + 1}")
        seconds, entries = fit(model, recipe, stream, stage_dir, stage_key, spec.name)
        spent += seconds
        log += [{**e, "stage": index + 1, "step": e["step"] + before} for e in entries]
        before += stage.steps
    for param in model.parameters():
        param.requires_grad = True
    heldout = heldout_loss(model, data.heldout_windows(spec.recipe))
    total = spec.recipe.model_copy(update={"steps": spec.steps})
    (run_dir / "train_log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log), encoding="utf-8")
    return save_trained(spec.model_dump(mode="json"), total, run_dir, model, data, log, spent, heldout)


def _check_tokenizer(base_dir: Path, data) -> None:
    meta_path = base_dir / "zoo.json"
    if not meta_path.is_file():
        raise CocaEvalError(f"{base_dir} is not a trained zoo model (no zoo.json)")
    recorded = json.loads(meta_path.read_text(encoding="utf-8")).get("tokenizer_sha256")
    if recorded != data.tokenizer_sha256:
        raise CocaEvalError(f"{base_dir} was trained with another tokenizer than this zoo's books give")
