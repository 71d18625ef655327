"""The layers and models the CoCA benchmarks time: vanilla, CoCA-fast and CoCA-reference with the same
weights, shared by the CPU benchmark (``coca_bench.py``) and the CUDA ones (``coca_bench_cuda.py``,
``ppl_gpu_bench.py``), which therefore need not import one another."""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaRotaryEmbedding

from coca_eval.models.coca import CocaLlamaConfig, CocaLlamaForCausalLM
from coca_eval.models.coca.modeling_coca import CocaLlamaAttention

SHAPES = dict(hidden_size=576, num_attention_heads=9, num_key_value_heads=3, intermediate_size=1536)
MODEL = dict(SHAPES, num_hidden_layers=24, vocab_size=32000, tie_word_embeddings=True)


def attention_layers(shapes: dict = SHAPES) -> tuple[dict[str, torch.nn.Module], LlamaRotaryEmbedding]:
    """Vanilla, CoCA-fast and CoCA-reference layers with identical weights (t_proj = k_proj)."""
    torch.manual_seed(0)
    vanilla_config, fast_config, eager_config = (
        LlamaConfig(**shapes),
        CocaLlamaConfig(**shapes),
        CocaLlamaConfig(**shapes),
    )
    vanilla_config._attn_implementation = fast_config._attn_implementation = "sdpa"
    eager_config._attn_implementation = "eager"
    layers = {
        "vanilla": LlamaAttention(vanilla_config, 0),
        "coca": CocaLlamaAttention(fast_config, 0),
        "reference": CocaLlamaAttention(eager_config, 0),
    }
    state = {k.replace("k_proj", "t_proj"): v for k, v in layers["vanilla"].state_dict().items()}
    layers["coca"].load_state_dict(state)
    layers["reference"].load_state_dict(state)
    return {k: v.eval() for k, v in layers.items()}, LlamaRotaryEmbedding(fast_config)


def whole_models(shapes: dict = MODEL, positions: int = 16384) -> dict[str, torch.nn.Module]:
    """Vanilla and CoCA models with random weights, built on the default device (a ``torch.device``
    context puts them straight on a GPU)."""
    torch.manual_seed(0)
    vanilla = LlamaForCausalLM(LlamaConfig(**shapes, max_position_embeddings=positions)).eval()
    coca = CocaLlamaForCausalLM(CocaLlamaConfig(**shapes, max_position_embeddings=positions)).eval()
    return {"vanilla": vanilla, "coca": coca}
