"""Custom transformers model types, registered with the Auto classes only when something loads a model.

``import coca_eval`` must stay free of torch and transformers (``coca-eval --help``, ``report`` and
``gate`` never run a model), so nothing registers at import. Every place that hands a directory to
transformers' Auto classes (the hf backend, the local tokenizer/config side of vllm and openai,
``convert``, the vLLM plug-in, OpenCompass's model wrapper) calls :func:`register_model_types` first.

A new model type adds one line to :data:`MODEL_TYPE_REGISTRATIONS`: a lazy ``"module:function"``
whose function registers its config and model classes (idempotently).
"""

from __future__ import annotations

from coca_eval.registry import resolve

MODEL_TYPE_REGISTRATIONS: list[str] = [
    "coca_eval.models.coca:register",  # coca_llama, coca_gpt_neox
    "coca_eval.models.prope:register",  # prope_llama (p-RoPE; p = 0 is NoPE)
    "coca_eval.models.alibi:register",  # alibi_llama
]
_done: set[str] = set()


def register_model_types() -> None:
    """Run every registration once per process (cheap to call before each load)."""
    for target in MODEL_TYPE_REGISTRATIONS:
        if target not in _done:
            resolve(target)()
            _done.add(target)
