"""vLLM backend: windows scored through prompt log-probs, prompts generated greedily in one batch.

* Scoring: every window is a prompt; vLLM returns the log-prob of each prompt token given the tokens
  before it (``prompt_logprobs``), and the backend picks the entry of the actual next token at every
  scored position. The model runs in the method's dtype (float32 on CPU by default).
* Generation: greedy (temperature 0) with automatic prefix caching, so the filler all samples of a
  length share is computed once. vLLM cannot stop on a task's own rule (passkey's decided answer), so
  under such a rule it generates in rounds of growing length (stopping at EOS) until the rule has
  fired, and :meth:`~coca_eval.backends.stopping.StopRule.cut` cuts the output where step-by-step
  decoding would have stopped: the same tokens, by determinism of greedy decoding. A rule of EOS and
  budget alone is one round.
* Engines are created lazily and re-created only when the rope override changes (dynamic NTK, see
  :mod:`coca_eval.backends.vllm_rope`).

Importing this module does not import vLLM; loading a backend does.
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Sequence
from typing import Any

import torch

from coca_eval.backends.echo import echo_prompts
from coca_eval.backends.greedy import GreedyBackend, GreedyOptions, OnDone
from coca_eval.backends.local import LocalModelSide, TokenizerMixin, load_local_side
from coca_eval.backends.options import EngineOptions
from coca_eval.backends.stopping import StopRule
from coca_eval.backends.vllm_rope import rope_note, rope_overrides
from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.progress import work_done

FIRST_ROUND_TOKENS = 8


def _prepare_environment(on_cuda: bool) -> None:
    """Defaults that make an in-process CPU engine start quickly and small (each can be overridden)."""
    os.environ.setdefault("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")  # evaluating past the trained length
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not on_cuda:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # no spawned engine process
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache


def _eos_ids(side: LocalModelSide) -> set[int]:
    from transformers import GenerationConfig

    from coca_eval.backends.special_tokens import eos_ids

    try:
        generation = GenerationConfig.from_pretrained(side.path)
    except (OSError, ValueError):
        generation = GenerationConfig.from_model_config(side.config)
    return eos_ids(generation, side.tokenizer)


def _start_engine(kwargs: dict[str, Any]):
    """``vllm.LLM(**kwargs)``; settings vLLM refuses (a ValueError, e.g. ``data_parallel_size > 1``,
    which its in-process ``LLM`` does not run in 0.32) are one line, not a traceback."""
    from vllm import LLM

    try:
        return LLM(**kwargs)
    except ValueError as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise CocaEvalError(f"vLLM refused the engine settings: {reason}") from None


class VllmBackend(TokenizerMixin, GreedyBackend):
    """A method's model in a vLLM engine, behind the same interface as the hf backend."""

    def __init__(self, method, side: LocalModelSide, options: EngineOptions, longest: int) -> None:
        import vllm

        self.method, self.side, self.options = method, side, options
        # a disjoint window's prompt carries its last target (one token past the window), and vLLM wants
        # room for one generated token after any prompt: two positions more than the longest window
        self.max_model_len = options.max_model_len or max(longest + 2, side.trained_context or 0)
        self.on_cuda = torch.cuda.is_available()
        self.eos = _eos_ids(side)
        self._llm, self._key = None, None
        self.metadata: dict[str, Any] = {"vllm": vllm.__version__, "max_model_len": self.max_model_len}
        if note := rope_note(method.rope):
            self.metadata["rope_note"] = note

    def reserve(self, longest: int) -> None:
        """Room for sequences of ``longest`` tokens (prompt plus new tokens) that a task knows only once
        it has tokenised its prompts (BABILong's prepared rows are the rows' own length, not N): grows
        ``max_model_len`` before the engine starts. A ``--max-model-len`` too small, or an engine
        already started smaller, is one line."""
        need = longest + 1  # vLLM's check counts the prompt and wants room for the new tokens
        if need <= self.max_model_len:
            return
        if self.options.max_model_len or self._llm is not None:
            raise CocaEvalError(
                f"{self.method.label}: the longest prompt needs {need} positions but vLLM's max_model_len "
                f"is {self.max_model_len}; give --max-model-len {need} or more"
            )
        self.max_model_len = need
        self.metadata["max_model_len"] = need

    def _engine_kwargs(self, overrides: dict) -> dict[str, Any]:
        options = self.options
        context = max(self.max_model_len, self.side.config.get_text_config().max_position_embeddings)
        kwargs: dict[str, Any] = {
            "model": self.side.path,
            "tokenizer": self.side.path,
            "dtype": self.method.dtype,
            "max_model_len": self.max_model_len,
            "tensor_parallel_size": options.tensor_parallel_size,
            "pipeline_parallel_size": options.pipeline_parallel_size,
            "data_parallel_size": options.data_parallel_size,
            "enable_prefix_caching": True,
            "enforce_eager": (not self.on_cuda) if options.enforce_eager is None else options.enforce_eager,
            "generation_config": "vllm",  # plain greedy: ignore sampling defaults shipped with the model
            "hf_overrides": {**overrides, "max_position_embeddings": context},  # rotary tables long enough
            "seed": 0,
        }
        if options.gpu_memory_utilization is not None:
            kwargs["gpu_memory_utilization"] = options.gpu_memory_utilization
        if options.distributed_executor_backend is not None:  # else vLLM picks (mp on one node)
            kwargs["distributed_executor_backend"] = options.distributed_executor_backend
        if self.on_cuda and self.side.config.architectures[0].startswith("Coca"):
            kwargs["attention_config"] = {"backend": "COCA"}
        return kwargs

    def engine(self, length: int):
        """The engine for sequences of ``length`` tokens (re-created if the rope override changes)."""
        overrides = rope_overrides(self.side.config, self.method.rope, length)
        key = json.dumps(overrides, sort_keys=True)
        if key != self._key:
            self.close()
            kwargs = self._engine_kwargs(overrides)
            self._llm, self._key = _start_engine(kwargs), key
            self.metadata["engine"] = {k: v for k, v in kwargs.items() if k not in ("model", "tokenizer")}
        return self._llm

    def close(self) -> None:
        if self._llm is not None:
            from vllm.distributed import cleanup_dist_env_and_memory

            self._llm, self._key = None, None
            gc.collect()
            cleanup_dist_env_and_memory()

    def score(self, input_ids: torch.Tensor, first_logit: int, targets: torch.Tensor) -> torch.Tensor:
        """NLL of ``targets`` (b, s) from the prompt log-probs of prompts that hold every target (see
        :mod:`coca_eval.backends.echo`); the engine is the one for the window's length (b, n)."""
        from vllm import SamplingParams

        rows, scored = echo_prompts(input_ids, first_logit, targets)
        params = SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False)
        prompts = [{"prompt_token_ids": row} for row in rows]
        outputs = self.engine(input_ids.shape[1]).generate(prompts, params, use_tqdm=False)
        nll = [
            [-out.prompt_logprobs[j][row[j]].logprob for j in range(scored.start, scored.stop)]
            for out, row in zip(outputs, rows, strict=True)
        ]
        return torch.tensor(nll, dtype=torch.float64)  # (b, s)

    def _decode_greedy(
        self, prompts, prefix_lengths, stop: StopRule, on_done: OnDone, options: GreedyOptions
    ) -> bool:
        """All prompts in one batch (prefix caching shares their filler) under the task's ``stop`` rule;
        ``prefix_reuse=False`` runs them one at a time on an emptied prefix cache. The engine built for
        the prompts' length holds its dynamic rope base through the answer (see :mod:`.vllm_rope`),
        which is what ``hold_dynamic_rope`` asks for; the passkey task refuses per-token rescaling here
        before any model loads. ``batch_size`` is the hf backend's: the engine schedules every prompt of
        the call itself. Each ``prefix_groups`` group's prefix is cached first."""
        prefix_reuse = options.prefix_reuse
        if not prompts:
            return False
        llm = self.engine(max(map(len, prompts)))
        batches = [list(range(len(prompts)))] if prefix_reuse else [[i] for i in range(len(prompts))]
        if prefix_reuse and len(prompts) > 1:
            given = options.prefix_groups
            groups = list(given) if given is not None else [0] * len(prompts)
            for group in dict.fromkeys(groups):
                members = [i for i, g in enumerate(groups) if g == group]
                self._cache_prefix(llm, [prompts[i] for i in members], [prefix_lengths[i] for i in members])
        for batch in batches:
            if not prefix_reuse:
                llm.reset_prefix_cache()
            try:
                generated = self._greedy_in_rounds(llm, [prompts[i] for i in batch], stop)
            except NonFiniteOutput as exc:  # its rows named by their place in this call
                raise NonFiniteOutput(str(exc), {batch[r]: text for r, text in exc.rows.items()}) from None
            for i, tokens in zip(batch, generated, strict=True):
                on_done(i, stop.cut(tokens, self.eos, self.decode))
        return prefix_reuse and len(prompts) > 1

    def _greedy_in_rounds(self, llm, prompts: Sequence[Sequence[int]], stop: StopRule) -> list[list[int]]:
        """Greedy tokens in rounds of 8, 16, 32, ... new tokens; a prompt leaves once the stop rule has
        fired. A passkey answer is decided after a handful of tokens, so this spares most of the budget
        the engine would otherwise decode; a rule that fires only at EOS or the budget takes one round.
        The next round continues from prompt + tokens so far, whose cached blocks the prefix cache
        supplies."""
        from vllm import SamplingParams

        max_new_tokens = stop.max_new_tokens
        generated: list[list[int]] = [[] for _ in prompts]
        pending = list(range(len(prompts)))
        budget = FIRST_ROUND_TOKENS if stop.stops_early else max_new_tokens
        while pending:
            budget = min(budget, max_new_tokens - len(generated[pending[0]]))  # pending ones are level
            params = SamplingParams(
                max_tokens=budget, temperature=0.0, stop_token_ids=sorted(self.eos), detokenize=False,
                logprobs=0,  # the chosen token's, to refuse an answer decoded from non-finite logits
            )  # fmt: skip
            requests = [{"prompt_token_ids": [*map(int, prompts[i]), *generated[i]]} for i in pending]
            grown = set()
            for i, out in zip(pending, llm.generate(requests, params, use_tqdm=False), strict=True):
                _check_finite(out.outputs[0], len(generated[i]), i)
                prefilled = 0 if generated[i] else len(prompts[i])  # later rounds read the prompt cached
                generated[i] += list(out.outputs[0].token_ids)
                work_done(prefilled + len(out.outputs[0].token_ids))  # a cell's progress counts tokens
                grown.update([i] if len(out.outputs[0].token_ids) == budget else [])
            pending = [  # a short round ended at EOS (or the engine's length limit): nothing follows
                i for i in sorted(grown) if stop.first_stop(generated[i], self.eos, self.decode) is None
            ]
            budget *= 2
        return generated

    @staticmethod
    def _cache_prefix(llm, prompts: Sequence[Sequence[int]], prefix_lengths: Sequence[int]) -> None:
        """Prefill the longest shared prefix alone first. Requests scheduled in the same step cannot
        reuse each other's blocks, so without this every sample of a batch would prefill the filler
        itself; after it, each sample computes only what follows its own prefix."""
        from vllm import SamplingParams

        deepest = max(range(len(prompts)), key=lambda i: prefix_lengths[i])
        prefix = [int(t) for t in prompts[deepest][: max(1, prefix_lengths[deepest])]]
        llm.generate(
            [{"prompt_token_ids": prefix}], SamplingParams(max_tokens=1, detokenize=False), use_tqdm=False
        )


def load_vllm_backend(method, options: EngineOptions, longest: int) -> VllmBackend:
    """Load the tokenizer side now; the engine starts on first use (it depends on the length)."""
    _prepare_environment(torch.cuda.is_available())
    try:
        import vllm  # noqa: F401
    except ImportError as exc:
        raise CocaEvalError(
            f"--backend vllm needs vLLM ({exc}): run `bash scripts/install_vllm_cpu.sh` (CPU) "
            "or `pip install coca-eval[vllm]` (GPU)"
        ) from None
    from coca_eval.models.vllm_plugin import register

    register()
    return VllmBackend(method, load_local_side(method.model), options, longest)


def load_for_request(method, request) -> object:
    """The backend registry's loader (:mod:`coca_eval.backends.registry`)."""
    return load_vllm_backend(method, request.engine, request.longest)


def _check_finite(completion, answered: int, row: int = 0) -> None:
    """Raise :class:`~coca_eval.errors.NonFiniteOutput` when a token of ``completion`` (prompt ``row``)
    was chosen from non-finite logits (its log-prob is NaN or infinite); ``answered`` tokens came in
    earlier rounds."""
    chosen = completion.logprobs or [None] * len(completion.token_ids)  # one {token: Logprob} per step
    for step, (token, entries) in enumerate(zip(completion.token_ids, chosen, strict=True)):
        entry = entries.get(token) if entries else None
        if entry is not None and not math.isfinite(entry.logprob):
            text = f"non-finite logits at answer token {answered + step + 1}"
            raise NonFiniteOutput(text, {row: f"sample {row}: {text}"})
