"""Ship a trained zoo model inside the package: the same weights stored in float16.

Trained weights are fp32; stored as fp16 they are half the size (a wheel carries nine of them), and
read back into fp32 they differ from the trained ones by the fp16 rounding alone (a relative error
of at most 2^-11 per weight in fp16's normal range; the largest absolute change is recorded in
``zoo.json``). Every shipped number in ``reports/zoo`` is
measured on the stored weights, so the reports and a fresh install agree exactly.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from coca_eval.errors import CocaEvalError
from coca_eval.files import copy_side_file

FP16_MAX = torch.finfo(torch.float16).max
SIDE_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")


def ship(model_dir: Path, dest: Path) -> Path:
    """Write ``model_dir`` (a trained zoo model) to ``dest`` with fp16 weights; returns ``dest``."""
    from transformers import AutoModelForCausalLM

    from coca_eval.models.registration import register_model_types

    register_model_types()
    meta_path = model_dir / "zoo.json"
    if not meta_path.is_file():
        raise CocaEvalError(f"{model_dir} is not a trained zoo model (no zoo.json)")
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, trust_remote_code=False)
    largest = max(p.abs().max().item() for p in model.parameters())
    if largest > FP16_MAX:
        raise CocaEvalError(f"{model_dir}: a weight of {largest:g} does not fit in float16")
    error = _rounding_error(model)
    if dest.exists():
        shutil.rmtree(dest)
    model.to(torch.float16).save_pretrained(dest, safe_serialization=True)
    for name in SIDE_FILES:
        if (model_dir / name).is_symlink() or (model_dir / name).exists():
            copy_side_file(model_dir / name, model_dir, dest)
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["stored_dtype"] = "float16"
    meta["stored_max_abs_error"] = error
    (dest / "zoo.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    for written in dest.iterdir():
        written.chmod(0o644)  # package data: readable by whoever installs it
    return dest


def _rounding_error(model) -> float:
    """The largest absolute change any weight undergoes when stored as fp16."""
    return max((p.half().float() - p).abs().max().item() for p in model.parameters())
