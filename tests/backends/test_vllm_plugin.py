"""The plugin's registrations, and greedy token ids from vLLM equal to hf's for a CoCA model
(in-process engine, so this also covers the backend API below the CLI)."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
import torch
from vllm_models import make_model

from coca_eval.backends.options import EngineOptions, load_backend
from coca_eval.methods import make_method

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vLLM is not installed (bash scripts/install_vllm_cpu.sh, then run pytest in .venv-vllm)",
    ),
]


def test_register_is_idempotent_and_exposed_as_entry_point():
    from vllm import ModelRegistry
    from vllm.v1.attention.backends.registry import AttentionBackendEnum

    from coca_eval.models.vllm_plugin import ARCHITECTURES, register

    register()
    register()
    assert set(ARCHITECTURES) <= set(ModelRegistry.get_supported_archs())
    backend = AttentionBackendEnum["COCA"].get_class()
    assert backend.get_name() == "COCA" and backend.__name__ == "CocaAttentionBackend"
    plugins = importlib.metadata.entry_points(group="vllm.general_plugins")
    assert any(p.value == "coca_eval.models.vllm_plugin:register" for p in plugins)


def test_greedy_token_ids_equal_hf(tmp_path):
    model = make_model(tmp_path / "strict", "coca_llama", "strict")
    generator = torch.Generator().manual_seed(3)
    prefix = [0] + torch.randint(2, 300, (200,), generator=generator).tolist()
    prompts = [prefix + torch.randint(2, 300, (40 + 10 * i,), generator=generator).tolist() for i in range(3)]
    tokens = {}
    for backend_name in ("hf", "vllm"):
        method = make_method(str(model), "none", None, "float32", backend_name)
        backend = load_backend(method, "cpu", None, EngineOptions(), 300)
        found: dict[int, list[int]] = {}
        backend.generate_greedy(prompts, [201] * 3, 12, found.__setitem__)
        tokens[backend_name] = [found[i] for i in range(3)]
        getattr(backend, "close", lambda: None)()
    assert tokens["hf"] == tokens["vllm"] and all(len(t) >= 1 for t in tokens["hf"])
