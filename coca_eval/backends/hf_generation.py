"""Greedy decoding on the hf backend, with the task's stop rule and the shared-prefix fast path.

* Early stop: the task's :class:`~coca_eval.backends.stopping.StopRule` after every token.
* Non-finite logits (a model that yields NaN from some position on) stop the sample with
  :class:`~coca_eval.errors.NonFiniteOutput` instead of an answer read from them.
* No copying: decoding writes into a :mod:`~coca_eval.backends.kv_cache` buffer instead of growing
  the cache by concatenation at every token.
* Shared prefix: all samples of one length share a leading run of tokens (passkey: BOS + intro + the
  filler before their key line).
  One forward over the longest such prefix fills a KV cache; samples run from the deepest key to the
  shallowest, each cropping the cache back to its own prefix and computing only the rest. A crop only
  drops positions, so the next (shorter) prefix is still intact.

The fast path gives the naive run's outputs (to float rounding) wherever a position's keys are the same
in both. Dynamic rope scaling (dynamic NTK, dynamic YaRN) rescales with the sequence's length: a naive
run prefills its whole prompt at the prompt's scaling, so the pieces are prefilled with the tables held
at that length (:mod:`~coca_eval.backends.dynamic_rope`), which needs every prompt to have one length
(the passkey and RULER prompts do); decoding then rescales token by token in both routes alike, or, with
``hold_dynamic_rope``, keeps the prompt's scaling in both. Sliding-window caches cannot be cropped
back, so they always take the naive route.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext

import torch

from coca_eval.backends.kv_cache import buffered_cache
from coca_eval.backends.special_tokens import eos_ids
from coca_eval.backends.stopping import StopRule, stop_rule
from coca_eval.errors import NonFiniteOutput
from coca_eval.models.layer_cache import cache_keyword, returned_cache


def _plain_decode(tokenizer) -> Callable[[Sequence[int]], str]:
    return lambda tokens: tokenizer.decode(list(tokens), skip_special_tokens=True)


class GreedyDecoder:
    """Greedy generation on an :class:`~coca_eval.backends.hf.HFBackend` under a stop rule (a bare
    token budget stops at EOS or after that many tokens).

    ``hold_dynamic_rope``: the answer keeps the prompt's dynamic rope scaling (as vLLM's engine does)
    instead of rescaling with every generated token (as transformers does)."""

    def __init__(self, backend, stop: StopRule | int, hold_dynamic_rope: bool = False) -> None:
        self.backend, self.model, self.stop = backend, backend.model, stop_rule(stop)
        self.hold = hold_dynamic_rope and backend.has_dynamic_rope
        self.eos = eos_ids(self.model.generation_config, backend.tokenizer)
        self._decode = _plain_decode(backend.tokenizer)
        self._cache_keyword = cache_keyword(self.model)

    def _forward(self, ids: Sequence[int], cache=None):
        input_ids = torch.tensor([list(ids)], device=self.backend.device)  # (1, n)
        cached = {self._cache_keyword: cache if cache is not None else buffered_cache(self.model)}
        out = self.model(input_ids=input_ids, use_cache=True, logits_to_keep=1, **cached)
        return out.logits[0, -1], returned_cache(out)  # (vocab,), cache

    def _continue(self, logits: torch.Tensor, cache) -> list[int]:
        generated: list[int] = []
        while True:
            if not bool(torch.isfinite(logits).all()):
                raise NonFiniteOutput(f"non-finite logits at answer token {len(generated) + 1}")
            token = int(logits.argmax())
            generated.append(token)
            if self.stop.stops_after(generated, self.eos, self._decode):
                return generated
            logits, cache = self._forward([token], cache)

    @torch.inference_mode()
    def naive(self, prompt: Sequence[int]) -> list[int]:
        """One sample from scratch: prefill the whole prompt, then decode."""
        if self.hold:
            return self._answer(prompt, 0, None)
        self.backend.reset_dynamic_rope()
        logits, cache = self._forward(prompt)
        return self._continue(logits, cache)

    @torch.inference_mode()
    def shared_prefix(
        self,
        prompts: Sequence[Sequence[int]],
        prefix_lengths: Sequence[int],
        on_done: Callable[[int, list[int]], None],
    ) -> None:
        """Decode every prompt, reusing the KV cache of their common prefix; calls ``on_done(i, tokens)``.

        With dynamic rope every prompt has one length (see :func:`prefix_reuse_is_exact`)."""
        order = sorted(range(len(prompts)), key=lambda i: -prefix_lengths[i])
        longest = order[0]
        with self._scaling(len(prompts[longest])):
            _, cache = self._forward(prompts[longest][: max(1, prefix_lengths[longest])])
        for i in order:
            keep = max(1, prefix_lengths[i])
            _crop_to(cache, keep)
            on_done(i, self._answer(prompts[i], keep, cache))

    def _answer(self, prompt: Sequence[int], keep: int, cache) -> list[int]:
        """Prefill ``prompt[keep:]`` after the cached ``prompt[:keep]``, then decode the answer."""
        with self._scaling(len(prompt), through_answer=self.hold):
            logits, cache = self._forward(prompt[keep:], cache)
            if self.hold:
                return self._continue(logits, cache)
        return self._continue(logits, cache)

    def _scaling(self, length: int, through_answer: bool = False):
        """Dynamic rope held at the whole prompt's scaling while a piece of it is prefilled (and, with
        ``through_answer``, while the answer is decoded); a no-op for other rotary tables."""
        if self.backend.has_dynamic_rope:
            return self.backend.dynamic_rope_held_at(length, through_answer)
        return nullcontext()


def decode_prompts(
    decoder: GreedyDecoder,
    prompts: Sequence[Sequence[int]],
    prefix_lengths: Sequence[int],
    on_done: Callable[[int, list[int]], None],
    prefix_reuse: bool = True,
) -> bool:
    """Decode every prompt by the fastest exact route; returns whether the shared prefix was reused.

    No prompts is nothing to do (a resumed cell whose samples are all journaled), as in the vLLM backend.
    """
    if not prompts:
        return False
    reuse = prefix_reuse and len(prompts) > 1 and prefix_reuse_is_exact(decoder.backend, prompts)
    if reuse:
        decoder.shared_prefix(prompts, prefix_lengths, on_done)
    else:
        for i, prompt in enumerate(prompts):
            on_done(i, decoder.naive(prompt))
    return reuse


def _crop_to(cache, keep: int) -> None:
    """Drop cached positions beyond ``keep`` (a negative ``crop`` removes that many, in every version)."""
    surplus = cache.get_seq_length() - keep
    if surplus > 0:
        cache.crop(-surplus)


def prefix_reuse_is_exact(backend, prompts: Sequence[Sequence[int]]) -> bool:
    """Whether cached prefixes give the very outputs a fresh per-sample run gives (see module doc)."""
    config = backend.model.config.get_text_config()
    if getattr(config, "sliding_window", None) and "sliding_attention" in (
        getattr(config, "layer_types", None) or []
    ):
        return False
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
        return False
    return not backend.has_dynamic_rope or len({len(p) for p in prompts}) == 1
