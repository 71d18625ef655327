"""The generated OpenCompass config, executed against stand-ins for mmengine and OpenCompass's configs."""

import contextlib
import sys
import types

from coca_eval.methods import make_method
from coca_eval.opencompass.config import MODEL_CLASS, ModelSettings, config_text, model_abbrs
from coca_eval.opencompass.datasets import parse_datasets

UPSTREAM = {
    "opencompass.configs.datasets.SuperGLUE_COPA.SuperGLUE_COPA_ppl": {
        "COPA_datasets": [{"abbr": "COPA", "path": "json", "data_files": "./data/SuperGLUE/COPA/val.jsonl"}]
    },
    "opencompass.configs.datasets.FewCLUE_csl.FewCLUE_csl_ppl": {
        "csl_datasets": [
            {"abbr": "csl_dev", "data_files": "./data/FewCLUE/csl/dev_few_all.json"},
            {"abbr": "csl_test", "data_files": "./data/FewCLUE/csl/test_public.json"},
        ]
    },
    "opencompass.configs.datasets.mmlu.mmlu_ppl": {
        "mmlu_datasets": [
            {"abbr": f"lukaemon_mmlu_{s}", "path": "opencompass/mmlu", "name": s}
            for s in ("anatomy", "virology")
        ]
    },
}


def execute(text, monkeypatch):
    """Run the config as mmengine would, with upstream's dataset modules replaced by small stand-ins."""
    mmengine = types.ModuleType("mmengine.config")
    mmengine.read_base = contextlib.nullcontext
    monkeypatch.setitem(sys.modules, "mmengine", types.ModuleType("mmengine"))
    monkeypatch.setitem(sys.modules, "mmengine.config", mmengine)
    for name, values in UPSTREAM.items():
        parts = name.split(".")
        for i in range(1, len(parts)):
            monkeypatch.setitem(sys.modules, ".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
        module = types.ModuleType(name)
        module.__dict__.update({k: [dict(d) for d in v] for k, v in values.items()})
        monkeypatch.setitem(sys.modules, name, module)
    scope: dict = {}
    exec(compile(text, "config.py", "exec"), scope)
    return scope


def test_config_keeps_table5_splits_and_makes_data_paths_absolute(tmp_path, monkeypatch):
    methods = [
        make_method("/m/llama", "none", "LLaMA tiny", "float32", "hf"),
        make_method("/m/coca", "linear:2", "CoCA & PI", "bfloat16", "hf"),
    ]
    datasets = parse_datasets("COPA,CSL,MMLU:anatomy")
    text = config_text(model_abbrs(methods), datasets, tmp_path, ModelSettings(batch_size=4, max_seq_len=512))
    scope = execute(text, monkeypatch)
    assert [d["abbr"] for d in scope["datasets"]] == ["COPA", "csl_dev", "lukaemon_mmlu_anatomy"]
    assert scope["datasets"][0]["data_files"] == f"{tmp_path.resolve()}/data/SuperGLUE/COPA/val.jsonl"
    assert scope["datasets"][2]["path"] == "opencompass/mmlu"  # resolved through COMPASS_DATA_CACHE
    first, second = scope["models"]
    assert first["type"] == MODEL_CLASS and first["abbr"] == "LLaMA_tiny"
    assert (second["abbr"], second["rope"], second["dtype"]) == ("CoCA_PI", "linear:2", "bfloat16")
    assert (second["batch_size"], second["max_seq_len"], second["run_cfg"]) == (4, 512, {"num_gpus": 0})


def test_model_abbrs_are_file_safe_and_unique():
    methods = [make_method("/m/a", "none", label, "float32", "hf") for label in ("a/b", "a b", "a:b")]
    assert list(model_abbrs(methods)) == ["a_b", "a_b_2", "a_b_3"]


def test_a_work_directory_is_reused_only_for_the_same_identity(tmp_path):
    from datetime import datetime

    from coca_eval.opencompass.runner import opencompass_command
    from coca_eval.opencompass.task import reusable_output

    identity = {"methods": {"m": {"model": "x"}}, "weights": {"x": "local:1"}}
    assert reusable_output(tmp_path, identity) is None  # nothing ran here yet
    (tmp_path / "outputs" / "20260101_000000").mkdir(parents=True)
    newer = datetime.now().strftime("%Y%m%d_%H%M%S")
    (tmp_path / "outputs" / newer).mkdir()
    assert reusable_output(tmp_path, identity) == newer
    changed = {**identity, "weights": {"x": "local:2"}}
    assert reusable_output(tmp_path, changed) is None  # other weights: start afresh
    (tmp_path / "outputs" / newer).rename(tmp_path / "outputs" / "20260102_000000")  # made before
    assert reusable_output(tmp_path, changed) is None  # ... and an older output is never reused
    command = opencompass_command(tmp_path / "c.py", tmp_path / "outputs", 1, False, reuse="20260102_000000")
    assert command[-2:] == ["--reuse", "20260102_000000"]  # (the stamp passed through as given)
    assert "--reuse" not in opencompass_command(tmp_path / "c.py", tmp_path / "outputs", 1, False)
