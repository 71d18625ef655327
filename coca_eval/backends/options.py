"""Engine options of the serving backends, and the one place a method's backend gets loaded.

The options travel from the CLI (or a notebook) to whichever backend a method names. None of them
changes a number, so they stay out of the cell keys; the backend name itself is part of the method.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from coca_eval.errors import CocaEvalError

EXECUTORS = ("mp", "ray")  # vLLM's distributed_executor_backend values that suit a coca-eval run
_SIZES = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_concurrent")
# a server's requests in flight at once: past this a typo (4000 for 40) only opens threads and sockets
MAX_CONCURRENT = 256
REQUEST_TIMEOUT_S = 120.0  # a completions request of BATCH long prompts answers well within this


@dataclass(frozen=True)
class EngineOptions:
    """vLLM engine settings (``None`` = vLLM's default); the server URLs of the openai backend, how
    many requests each may have in flight, the environment variable holding its API key (``None``
    = ``OPENAI_API_KEY``; the key itself never enters these options, so it cannot be recorded), and
    how long one request may go unanswered before it counts as failed (then retried)."""

    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    distributed_executor_backend: str | None = None
    gpu_memory_utilization: float | None = None
    max_model_len: int | None = None
    enforce_eager: bool | None = None
    base_urls: tuple[str, ...] = ()
    max_concurrent: int = 4
    api_key_env: str | None = None
    request_timeout: float = REQUEST_TIMEOUT_S

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_urls", tuple(self.base_urls))  # a list from a notebook is fine
        for name in _SIZES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CocaEvalError(f"--{name.replace('_', '-')} must be a positive integer (got {value})")
        if self.max_concurrent > MAX_CONCURRENT:
            raise CocaEvalError(
                f"--max-concurrent {self.max_concurrent} is more requests per server than any server "
                f"takes at once; use at most {MAX_CONCURRENT}"
            )
        timeout = self.request_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise CocaEvalError(f"--request-timeout must be a positive number of seconds (got {timeout})")
        if self.distributed_executor_backend not in (None, *EXECUTORS):
            raise CocaEvalError(
                f"--distributed-executor-backend must be one of {', '.join(EXECUTORS)} "
                f"(got {self.distributed_executor_backend})"
            )
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise CocaEvalError(
                f"--gpu-memory-utilization must lie in (0, 1] (got {self.gpu_memory_utilization})"
            )
        if self.max_model_len is not None and self.max_model_len < 1:
            raise CocaEvalError(f"--max-model-len must be a positive integer (got {self.max_model_len})")
        self._check_servers()

    def _check_servers(self) -> None:
        """Every URL and the key's variable name, refused before any journal is written."""
        from coca_eval.backends.server_url import parse_server_url

        for url in self.base_urls:
            parse_server_url(url)
        if len({parse_server_url(url).public for url in self.base_urls}) < len(self.base_urls):
            raise CocaEvalError("--base-url names the same server twice; give each server once")
        if self.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_env):
            # not quoted: a key pasted here by mistake must not reach the terminal or a log
            raise CocaEvalError("--api-key-env takes the name of an environment variable, not the key")

    def describe(self) -> dict[str, Any]:
        """What a run records: every server's URL without credentials or query (see ``server_url``)."""
        from coca_eval.backends.server_url import public_url

        recorded = {k: v for k, v in asdict(self).items() if v is not None and v != ()}
        if self.base_urls:
            recorded["base_urls"] = [public_url(url) for url in self.base_urls]
        return recorded


def check_backends(methods, options: EngineOptions) -> None:
    """Fail before any model loads: vLLM missing, or an openai method without a reachable server."""
    from coca_eval.backends.registry import BACKENDS

    for name in dict.fromkeys(m.backend for m in methods):
        entry = BACKENDS.get(name)
        if entry.check is not None:
            entry.check(methods, options)


def check_lengths(methods, options: EngineOptions, need) -> None:
    """Fail before any model loads when a method's backend cannot hold the run's longest sequence
    (``need``, a :class:`~coca_eval.backends.registry.SequenceNeed`)."""
    from coca_eval.backends.registry import BACKENDS

    for method in methods:
        entry = BACKENDS.get(method.backend)
        if entry.check_length is not None:
            entry.check_length(method, options, need)


def load_backend(method, device: str, device_map: str | None, options: EngineOptions, longest: int):
    """Load ``method`` on the backend it names; ``longest`` is the longest sequence the task will run
    (prompt plus new tokens), which sizes engines that must know it up front (vLLM's max_model_len)."""
    from coca_eval.backends.registry import BACKENDS, BackendRequest

    return BACKENDS.get(method.backend).load(method, BackendRequest(device, device_map, options, longest))


def check_device(device: str, methods) -> None:
    """Fail before any model loads on a device torch cannot use: a typo (``--device foo``) or CUDA on a
    machine without it would otherwise be a traceback after the model was read."""
    import re

    if not re.fullmatch(r"cpu|mps|cuda(:\d+)?", device):
        raise CocaEvalError(f"--device {device!r} is not a device: use cpu, cuda, cuda:N or mps")
    if not any(m.backend == "hf" for m in methods):
        return  # vllm and openai place the model themselves
    import torch

    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= count:
            raise CocaEvalError(
                f"--device {device}: this machine has {count} CUDA device(s); use --device cpu"
            )
    if device == "mps" and not torch.backends.mps.is_available():
        raise CocaEvalError("--device mps: MPS is not available on this machine; use --device cpu")
