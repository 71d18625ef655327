"""Engine options of the serving backends, and the one place a method's backend gets loaded.

The options travel from the CLI (or a notebook) to whichever backend a method names. None of them
changes a number, so they stay out of the cell keys; the backend name itself is part of the method.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from coca_eval.errors import CocaEvalError


@dataclass(frozen=True)
class EngineOptions:
    """vLLM engine settings (``None`` = vLLM's default) and the server URL of the openai backend."""

    tensor_parallel_size: int = 1
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    enforce_eager: bool | None = None
    base_url: str | None = None

    def __post_init__(self) -> None:
        if self.tensor_parallel_size < 1:
            raise CocaEvalError(f"--tensor-parallel-size must be >= 1 (got {self.tensor_parallel_size})")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise CocaEvalError(
                f"--gpu-memory-utilization must lie in (0, 1] (got {self.gpu_memory_utilization})"
            )
        if self.max_model_len is not None and self.max_model_len < 1:
            raise CocaEvalError(f"--max-model-len must be a positive integer (got {self.max_model_len})")

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def check_backends(methods, options: EngineOptions) -> None:
    """Fail before any model loads: vLLM missing, or an openai method without a reachable server."""
    import importlib.util

    backends = {m.backend for m in methods}
    if "vllm" in backends and importlib.util.find_spec("vllm") is None:
        raise CocaEvalError(
            "--backend vllm needs vLLM: run `bash scripts/install_vllm_cpu.sh` (CPU) "
            "or `pip install coca-eval[vllm]` (GPU)"
        )
    if "openai" in backends:
        if any(m.backend == "openai" and m.rope.kind != "none" for m in methods):
            raise CocaEvalError("--backend openai cannot apply --rope patches; start the server with them")
        if not options.base_url:
            raise CocaEvalError("--backend openai needs --base-url URL (e.g. http://127.0.0.1:8000/v1)")
        from coca_eval.backends.openai import CompletionsClient

        CompletionsClient(options.base_url).served_models()


def load_backend(method, device: str, device_map: str | None, options: EngineOptions, longest: int):
    """Load ``method`` on the backend it names; ``longest`` is the longest sequence the task will run
    (prompt plus new tokens), which sizes engines that must know it up front (vLLM's max_model_len)."""
    if method.backend == "hf":
        from coca_eval.backends.hf import load_hf_backend

        return load_hf_backend(method, device, device_map)
    if method.backend == "vllm":
        from coca_eval.backends.vllm import load_vllm_backend

        return load_vllm_backend(method, options, longest)
    if method.backend == "openai":
        from coca_eval.backends.openai import load_openai_backend

        return load_openai_backend(method, options)
    raise CocaEvalError(f"unknown backend {method.backend!r}")
