"""A stand-in for the ``vllm`` package, so the vllm backend's plumbing runs without vLLM or a GPU.

:func:`install` puts it in ``sys.modules`` for one test. Its ``LLM`` keeps the keyword arguments of
every engine coca-eval starts (``LLM.started``) and answers prompt log-probs (what ``ppl`` asks
for) from the transformers model at ``model``; ``LLM.refuse`` makes the constructor raise the
``ValueError`` vLLM 0.32 raises for ``data_parallel_size > 1`` in one process.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from types import SimpleNamespace

import torch
from transformers import AutoModelForCausalLM

DP_REFUSAL = (
    "LLM(data_parallel_size=2) is not supported for single-process usage and may hang. Please use "
    "the explicit multi-process data-parallel example at "
    "'examples/features/data_parallel/data_parallel_offline.py'."
)


class SamplingParams:
    def __init__(self, prompt_logprobs: int | None = None, **rest) -> None:
        self.prompt_logprobs, self.rest = prompt_logprobs, rest


class LLM:
    started: list[dict] = []
    refuse = False

    def __init__(self, **kwargs) -> None:
        type(self).started.append(kwargs)
        if type(self).refuse:
            raise ValueError(DP_REFUSAL)
        self.model = AutoModelForCausalLM.from_pretrained(kwargs["model"], dtype=torch.float32).eval()

    def generate(self, prompts: list[dict], params: SamplingParams, use_tqdm: bool = False) -> list:
        assert params.prompt_logprobs == 0, "the fake answers prompt log-probs only"
        return [self._echo(prompt["prompt_token_ids"]) for prompt in prompts]

    def _echo(self, ids: list[int]) -> SimpleNamespace:
        with torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].double()  # [N, V]
        logp = torch.log_softmax(logits, -1)
        entries = [{ids[j]: SimpleNamespace(logprob=float(logp[j - 1, ids[j]]))} for j in range(1, len(ids))]
        return SimpleNamespace(prompt_logprobs=[None, *entries])


def install(monkeypatch) -> type[LLM]:
    """The fake package for this test (and the backend's environment defaults, restored after it);
    returns its ``LLM`` class, a fresh one whose ``started`` is empty."""
    engine = type("LLM", (LLM,), {"started": [], "refuse": False})
    vllm = types.ModuleType("vllm")
    vllm.__spec__ = importlib.machinery.ModuleSpec("vllm", None)  # importlib.util.find_spec sees it
    vllm.__version__, vllm.LLM, vllm.SamplingParams = "0.0+fake", engine, SamplingParams
    distributed = types.ModuleType("vllm.distributed")
    distributed.cleanup_dist_env_and_memory = lambda: None
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    monkeypatch.setitem(sys.modules, "vllm.distributed", distributed)
    monkeypatch.setattr("coca_eval.models.vllm_plugin.register", lambda: None)  # no model registry here
    for name, value in [
        ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1"),
        ("VLLM_ENABLE_V1_MULTIPROCESSING", "0"),
        ("VLLM_CPU_KVCACHE_SPACE", "1"),
    ]:
        monkeypatch.setenv(name, value)
    return engine
