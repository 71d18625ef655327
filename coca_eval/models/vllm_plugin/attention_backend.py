"""The registered CoCA attention backend (name ``COCA``).

CoCA's dual form is ordinary softmax attention over (q ∘ rope(q), rope(t)), so the backend is the
platform's own kernel under a name of its own: ``--attention-backend COCA`` (or
``attention_config={"backend": "COCA"}``) selects it where the platform honours a configured backend
(CUDA: FlashAttention underneath). The CPU platform ignores the setting and keeps its CPU kernel, which
computes the same thing. What is CoCA-specific happens just before this backend writes the key into the
paged cache: the plugin's models form (q ∘ rope(q), rope(t)) in :func:`~coca_eval.models.vllm_plugin.ops.
coca_query_key`, with the fused Triton kernel on CUDA unless ``COCA_EVAL_COCA_KERNEL=torch`` asks for the
torch ops (the kernel measured faster on an H200; see :mod:`coca_eval.kernels`).
"""

from __future__ import annotations

from vllm.platforms import current_platform

if current_platform.is_cuda_alike():
    from vllm.v1.attention.backends.flash_attn import FlashAttentionBackend as _PlatformBackend
else:
    from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend as _PlatformBackend


class CocaAttentionBackend(_PlatformBackend):
    """The platform kernel, selectable as ``COCA``."""

    @staticmethod
    def get_name() -> str:
        return "COCA"
