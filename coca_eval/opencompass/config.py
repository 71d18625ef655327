"""The OpenCompass config file for our methods and the chosen datasets.

The file is plain Python in mmengine's format. Dataset lists are imported from OpenCompass's own
configs (so prompts and evaluators are exactly upstream's), filtered to the result names Table 5
reports, and their ``./data/...`` paths are made absolute under the data root: some loaders open
those paths relative to the working directory, others through ``COMPASS_DATA_CACHE``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.methods import MethodSpec
from coca_eval.opencompass.datasets import CONFIG_PACKAGE, BenchmarkDataset
from coca_eval.opencompass.outputs import expected_abbrs

MODEL_CLASS = "coca_eval.opencompass.model.CocaEvalModel"


@dataclass(frozen=True)
class ModelSettings:
    """How our model wrapper runs inside OpenCompass; nothing here is a method's identity."""

    device: str = "cpu"
    batch_size: int = 8
    max_seq_len: int = 2048
    max_out_len: int = 100


def model_abbrs(methods: Sequence[MethodSpec]) -> dict[str, MethodSpec]:
    """A file-name-safe, unique OpenCompass abbr per method (OpenCompass names directories by it)."""
    abbrs: dict[str, MethodSpec] = {}
    for method in methods:
        base = re.sub(r"[^A-Za-z0-9.+-]+", "_", method.label).strip("_") or "model"
        abbr, i = base, 2
        while abbr in abbrs:
            abbr, i = f"{base}_{i}", i + 1
        abbrs[abbr] = method
    return abbrs


def model_entry(abbr: str, method: MethodSpec, settings: ModelSettings) -> dict:
    """One ``models`` entry: the keys OpenCompass reads itself, then our wrapper's arguments."""
    return {
        "type": MODEL_CLASS,
        "abbr": abbr,
        "path": method.model,
        "rope": method.rope.spec,
        "dtype": method.dtype,
        "device": settings.device,
        "max_seq_len": settings.max_seq_len,
        "max_out_len": settings.max_out_len,
        "batch_size": settings.batch_size,
        "run_cfg": {"num_gpus": 1 if settings.device.startswith("cuda") else 0},
    }


def config_text(
    methods: dict[str, MethodSpec],
    datasets: Sequence[BenchmarkDataset],
    data_root: Path,
    settings: ModelSettings,
) -> str:
    imports = "\n".join(
        f"    from {CONFIG_PACKAGE}.{d.module} import {d.variable}" for d in dict.fromkeys(datasets)
    )
    keep = [abbr for d in datasets for abbr in expected_abbrs(d)]
    models = [model_entry(abbr, method, settings) for abbr, method in methods.items()]
    return f"""# Written by coca-eval: OpenCompass's dataset configs for our methods.
from mmengine.config import read_base

with read_base():
{imports}

DATA_ROOT = {str(Path(data_root).resolve())!r}
KEEP = {keep!r}
datasets = []
for _source in ({", ".join(d.variable for d in dict.fromkeys(datasets))},):
    for _dataset in _source:
        if _dataset["abbr"] in KEEP:
            for _key in ("path", "data_files"):
                _value = _dataset.get(_key)
                if isinstance(_value, str) and _value.startswith("./data/"):
                    _dataset[_key] = DATA_ROOT + _value[1:]
            datasets.append(_dataset)
del _source, _dataset, _key, _value

models = {models!r}
"""
