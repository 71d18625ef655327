"""What the vllm backend needs without vLLM: rope-patch mapping, engine options, lazy imports, and a
one-line error when --backend vllm is asked for but vLLM is missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
import torch
from test_cli import run_cli
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from coca_eval.backends.options import EngineOptions
from coca_eval.backends.vllm_rope import rope_note, rope_overrides
from coca_eval.errors import CocaEvalError
from coca_eval.methods import BACKENDS, make_method
from coca_eval.models.rope import parse_rope

CONFIG = dict(hidden_size=128, num_attention_heads=2, max_position_embeddings=256, vocab_size=64)


def test_dynamic_ntk_becomes_the_exact_base_per_length():
    config = LlamaConfig(**CONFIG)
    patched = LlamaConfig(**CONFIG)
    patched.rope_parameters = {**patched.rope_parameters, "rope_type": "dynamic", "factor": 4.0}
    seq = torch.tensor(1000)
    reference, _ = ROPE_INIT_FUNCTIONS["dynamic"](patched, "cpu", seq_len=seq)  # transformers at 1000
    table = rope_overrides(config, parse_rope("dynamic:4"), 1000)["rope_parameters"]
    assert table["rope_type"] == "default"
    ours = 1.0 / (table["rope_theta"] ** (torch.arange(0, 64, 2, dtype=torch.float) / 64))
    assert torch.equal(ours, reference)
    short = rope_overrides(config, parse_rope("dynamic:4"), 200)["rope_parameters"]
    assert short["rope_theta"] == config.rope_parameters["rope_theta"]  # within the trained length
    assert "static" in rope_note(parse_rope("dynamic:4")) and rope_note(parse_rope("linear:2")) is None


def test_static_patches_pass_through():
    config = LlamaConfig(**CONFIG)
    assert rope_overrides(config, parse_rope("none"), 512) == {}
    linear = rope_overrides(config, parse_rope("linear:2"), 512)["rope_parameters"]
    assert linear["rope_type"] == "linear" and linear["factor"] == 2.0
    yarn = rope_overrides(config, parse_rope("yarn:4"), 512)["rope_parameters"]
    assert yarn["original_max_position_embeddings"] == 256
    assert config.rope_parameters.get("rope_type", "default") == "default"  # the input is not modified


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tensor_parallel_size": 0}, "tensor-parallel-size"),
        ({"pipeline_parallel_size": 0}, "--pipeline-parallel-size must be a positive integer"),
        ({"data_parallel_size": -2}, "--data-parallel-size must be a positive integer"),
        ({"distributed_executor_backend": "slurm"}, "--distributed-executor-backend must be one of mp, ray"),
        ({"gpu_memory_utilization": 1.5}, "gpu-memory-utilization"),
        ({"max_model_len": 0}, "max-model-len"),
    ],
)
def test_engine_options_are_checked(kwargs, message):
    with pytest.raises(CocaEvalError, match=message):
        EngineOptions(**kwargs)


def test_backends_are_known_and_checked(tiny_llama_dir):
    assert {"hf", "vllm", "openai"} <= set(BACKENDS)
    with pytest.raises(CocaEvalError, match="unknown backend"):
        make_method(str(tiny_llama_dir), "none", None, "float32", "tgi")
    assert EngineOptions(max_model_len=64).describe() == {
        "tensor_parallel_size": 1,
        "pipeline_parallel_size": 1,
        "data_parallel_size": 1,
        "max_model_len": 64,
        "max_concurrent": 4,
        "request_timeout": 120.0,
    }


def test_importing_never_pulls_in_vllm():
    code = (
        "import sys, coca_eval, coca_eval.backends.vllm, coca_eval.backends.openai, "
        "coca_eval.models.vllm_plugin; assert 'vllm' not in sys.modules, 'vllm imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-500:]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_missing_vllm_is_one_line(tiny_llama_dir, tmp_path):
    result = run_cli(
        "passkey", "--model", tiny_llama_dir, "--backend", "vllm", "--output", tmp_path / "o.json"
    )
    assert result.returncode == 2 and "install_vllm_cpu.sh" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_backend_option_is_rejected(tiny_llama_dir):
    result = run_cli("ppl", "--model", tiny_llama_dir, "--backend", "tgi")
    assert result.returncode == 2 and "tgi" in result.stderr
