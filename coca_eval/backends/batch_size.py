"""How many rows of one length the hf backend decodes together: ``--batch-size N`` or ``auto``.

A decoding row holds its keys and values for the prompt and the answer, and the batch's rows are
stacked from copies of rows filled apart (after a shared prefix), so for a moment each row's cache
exists twice; beside it, the row's logits in fp32. Weights and a prefill's activations do not grow
with the batch (rows are prefilled a few thousand tokens at a time), so the batch is bounded by these
per-row bytes alone: a lower bound worked out from sizes, never from a trial allocation.

``auto`` takes the largest batch whose rows fit in :data:`MEMORY_SHARE` of the memory free now,
capped where larger batches stop paying (:data:`AUTO_CAP`). On a 2-core CPU
(``reports/benchmarks/generation_caps_cpu.md``, ``benchmarks/generation_bench.py``) 32 SmolLM2-shaped
rows of 512 + 64 tokens took 166 s one at a time, 73 s at 8, 68 s at 16 and 64 s at 32: past 16 a
doubled cache buys 6 %, so the CPU cap is 16. The CUDA cap of 64 is not yet measured. An explicit
``N`` whose rows exceed the device's whole memory is refused before any model loads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError

MEMORY_SHARE = 0.5
AUTO_CAP = {"cpu": 16, "cuda": 64}
HEADROOM_POSITIONS = 256  # the buffered cache's room past the prompt (kv_cache.HEADROOM)
_DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def kv_bytes_per_position(config: Any, dtype_bytes: int) -> int:
    """Keys and values of one position over every layer."""
    text = config.get_text_config()
    heads = getattr(text, "num_key_value_heads", None) or text.num_attention_heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    return 2 * text.num_hidden_layers * heads * head_dim * dtype_bytes


def row_bytes(config: Any, dtype_bytes: int, length: int, budget: int) -> int:
    """The least memory one decoding row adds (module doc)."""
    positions = length + max(budget, HEADROOM_POSITIONS)
    return (
        2 * kv_bytes_per_position(config, dtype_bytes) * positions
        + 2 * 4 * config.get_text_config().vocab_size
    )


def free_memory(device: Any) -> int:
    """Bytes free now on ``device``: the GPU's free memory, or the machine's available memory."""
    import torch

    if getattr(device, "type", str(device)) == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    return _meminfo("MemAvailable:") or _meminfo("MemTotal:") or 2**32


def total_memory(device: str) -> int:
    """Bytes the device has at all (what an explicit batch is checked against)."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.device(device)).total_memory
    return _meminfo("MemTotal:") or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _meminfo(field: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def auto_batch_size(model: Any, length: int, budget: int) -> int:
    """The batch ``auto`` picks for ``length``-token prompts and ``budget`` answer tokens on ``model``'s
    device (module doc); at least 1."""
    parameter = next(model.parameters())
    per_row = row_bytes(model.config, parameter.element_size(), length, budget)
    fits = int(MEMORY_SHARE * free_memory(parameter.device)) // per_row
    return max(1, min(AUTO_CAP.get(parameter.device.type, AUTO_CAP["cpu"]), fits))


def check_batch_size(methods: Any, device: str, length: int, budget: int, batch: int | None) -> None:
    """Refuse, in one line and before any model loads, an explicit batch whose rows of ``length``
    prompt tokens and ``budget`` answer tokens exceed the device's memory on some hf method's model
    (only its config is read)."""
    if batch is None:
        return
    from transformers import AutoConfig

    from coca_eval.models.presets import resolve_model
    from coca_eval.models.registration import register_model_types

    register_model_types()
    for method in methods:
        if method.backend != "hf":
            continue
        try:
            config = AutoConfig.from_pretrained(resolve_model(method.model)[0], trust_remote_code=False)
        except (OSError, ValueError, KeyError):  # the model's loader says what is wrong, in one line
            continue
        _check_rows(config, method.dtype, device, batch, length, budget)


def _check_rows(config: Any, dtype: str, device: str, batch: int, length: int, budget: int) -> None:
    need = batch * row_bytes(config, _DTYPE_BYTES[dtype], length, budget)
    have = total_memory(device)
    if need > have:
        raise CocaEvalError(
            f"--batch-size {batch}: {batch} rows of {length} + {budget} tokens need "
            f"{need / 2**30:.1f} GiB of KV cache, more than the {have / 2**30:.1f} GiB this {device} "
            "has; use a smaller N or auto"
        )
