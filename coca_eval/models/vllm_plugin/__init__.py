"""CoCA served through vLLM: an out-of-tree model plugin shipped with coca-eval.

vLLM calls :func:`register` through the ``vllm.general_plugins`` entry point in every process it
starts (engine core, workers, ``vllm serve``), so CoCA checkpoints written by coca-eval load there by
their ``architectures`` names. Registration uses lazy ``"module:Class"`` strings: nothing here imports
vLLM's model code until an engine actually builds a CoCA model. Importing this package never imports
vLLM; only :func:`register` does.
"""

from __future__ import annotations

ARCHITECTURES = {
    "CocaLlamaForCausalLM": "coca_eval.models.vllm_plugin.llama:CocaLlamaForCausalLM",
    "CocaNeoXForCausalLM": "coca_eval.models.vllm_plugin.neox:CocaNeoXForCausalLM",
}
ATTENTION_BACKEND = "COCA"
ATTENTION_BACKEND_CLASS = "coca_eval.models.vllm_plugin.attention_backend.CocaAttentionBackend"


def register() -> None:
    """Register the CoCA configs, architectures and attention backend with vLLM (safe to call again)."""
    from vllm import ModelRegistry

    from coca_eval.models.registration import register_model_types

    register_model_types()  # vLLM parses config.json with transformers' AutoConfig
    supported = set(ModelRegistry.get_supported_archs())
    for architecture, target in ARCHITECTURES.items():
        if architecture not in supported:
            ModelRegistry.register_model(architecture, target)
    _register_attention_backend()


def _register_attention_backend() -> None:
    from vllm.v1.attention.backends.registry import AttentionBackendEnum, register_backend

    if ATTENTION_BACKEND in AttentionBackendEnum.__members__:
        register_backend(AttentionBackendEnum[ATTENTION_BACKEND], ATTENTION_BACKEND_CLASS)
    else:
        register_backend(ATTENTION_BACKEND, ATTENTION_BACKEND_CLASS)
