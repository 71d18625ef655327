"""Greedy decoding on the hf backend: rows of one length decoded together (and rows of unequal lengths
left-padded together, :mod:`~coca_eval.backends.padding`), the task's stop rule per row, and the
shared-prefix fast path for the prefill.

* Batches without padding. Every prompt of a cell (and every cell of a run at one length and answer
  budget) has the same number of tokens, so ``B`` rows go through decoding together with no pad token
  and no attention mask: each step reads the weights once for ``B`` tokens instead of once per token.
  A row that stops (EOS, the budget, the task's rule) leaves the batch at once; the cache keeps the
  others' rows. Prompts of unequal lengths go in left-padded batches of similar lengths where the
  model pads exactly (:mod:`~coca_eval.backends.padding`).
* Prefill: where the prompts share a leading run of tokens (passkey: BOS + intro + the filler before
  their key line), one forward over the longest such prefix fills a KV cache; rows run from the deepest
  key to the shallowest, each cropping the cache back to its own prefix and computing only the rest,
  and the filled rows are stacked into the batch's cache. A crop only drops positions, so the next
  (shorter) prefix is still intact. Rows take this route only where their prefix saves more than a
  rest prefilled past a cache costs (:mod:`~coca_eval.backends.prefix_route`); the others, and every
  row where nothing is shared, are prefilled together, as many at once as
  :data:`PREFILL_TOKENS` allows, so a long prompt's activations are never held for many rows.
* Non-finite logits (a model yielding NaN from some position on) stop that row with a
  :class:`~coca_eval.errors.NonFiniteOutput` naming the sample, raised once the other rows finish.
* No copying: decoding writes into a :mod:`~coca_eval.backends.kv_cache` buffer (the cache never
  grows by concatenation), and masked attention reads grouped heads uncopied on CPU (:mod:`.prefix_route`).

Rows are independent in every layer, so the batch gives each row's tokens as a batch of one does, up to
the rounding of a different reduction order (tested token for token on every model kind). Dynamic rope
scaling (dynamic NTK, dynamic YaRN) rescales with the sequence's length: a naive run prefills its whole
prompt at the prompt's scaling, so the pieces are prefilled with the tables held at that length
(:mod:`~coca_eval.backends.dynamic_rope`), which needs every prompt to have one length (the passkey and
RULER prompts do); decoding then rescales token by token in both routes alike, or, with
``hold_dynamic_rope``, keeps the prompt's scaling in both. Sliding-window caches cannot be cropped back,
so they always prefill whole rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext

import torch

from coca_eval.backends.decode_rows import (
    DecodingRows,
    NonFiniteRows,
    RoutedBatch,
    batches_of,
    crop_to,
    layer_tensors,
    routed_order,
    same_length_batches,
)
from coca_eval.backends.greedy import OnDone
from coca_eval.backends.kv_cache import buffered_cache, select_rows, stacked_cache
from coca_eval.backends.padding import PaddedRows, padded_batches, slides
from coca_eval.backends.prefix_route import REST_CHUNK, PrefillCost, grouped_kv_heads, rows_reusing
from coca_eval.backends.special_tokens import eos_ids
from coca_eval.backends.stopping import StopRule, stop_rule
from coca_eval.models.layer_cache import cache_keyword, returned_cache
from coca_eval.progress import work_done

PREFILL_TOKENS = 8192
"""Prompt tokens prefilled in one forward when rows are prefilled together (at least one row)."""


def _plain_decode(tokenizer) -> Callable[[Sequence[int]], str]:
    return lambda tokens: tokenizer.decode(list(tokens), skip_special_tokens=True)


class GreedyDecoder:
    """Greedy generation on an :class:`~coca_eval.backends.hf.HFBackend` under a stop rule (a bare
    token budget stops at EOS or after that many tokens), ``batch_size`` rows at a time.

    ``hold_dynamic_rope``: the answer keeps the prompt's dynamic rope scaling (as vLLM's engine does)
    instead of rescaling with every generated token (as transformers does)."""

    def __init__(
        self, backend, stop: StopRule | int, hold_dynamic_rope: bool = False, batch_size: int = 1
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch size must be at least 1, not {batch_size}")
        self.backend, self.model, self.stop = backend, backend.model, stop_rule(stop)
        self.batch_size = batch_size
        self.hold = hold_dynamic_rope and backend.has_dynamic_rope
        self.eos = eos_ids(self.model.generation_config, backend.tokenizer)
        self._decode = _plain_decode(backend.tokenizer)
        self._cache_keyword = cache_keyword(self.model)
        self._stackable = buffered_cache(self.model) is not None  # rows filled apart can join one batch

    def _forward(self, rows: Sequence[Sequence[int]], cache=None, padding: dict | None = None):
        input_ids = torch.tensor([list(row) for row in rows], device=self.backend.device)  # (b, n)
        cache = cache if cache is not None else buffered_cache(self.model)
        cached = {self._cache_keyword: cache, **(padding or {})}
        with grouped_kv_heads(self.backend.device):  # masked attention without copied heads (CPU)
            out = self.model(input_ids=input_ids, use_cache=True, logits_to_keep=1, **cached)
        work_done(input_ids.numel())  # the run's progress counts tokens, not only finished samples
        return out.logits[:, -1], returned_cache(out)  # (b, vocab), cache

    def _continue(
        self, logits: torch.Tensor, cache, prompts: Sequence[int], on_done: OnDone, padded=None
    ) -> None:
        """Decode every row of ``cache`` (and ``padded``) from its last ``logits`` (b, vocab) until each
        stops; rows that stop leave the batch. Non-finite rows are left out, raised once all are done."""
        rows, failures = DecodingRows(list(prompts)), NonFiniteRows()
        while rows.prompts:
            # one transfer to the host per step: the argmax and whether the row's logits are finite
            picked = torch.stack([logits.argmax(dim=-1), torch.isfinite(logits).all(dim=-1)])  # (2, b)
            tokens, finite = picked.tolist()
            going = self._step(rows, finite, tokens, on_done, failures)
            if not going:
                break
            if len(going) < len(rows.prompts):
                going = select_rows(cache, going)  # the kept rows in their new batch order
                if padded is not None:
                    padded.keep(going)
            rows.keep(going)
            step = padded.step() if padded is not None else None
            logits, cache = self._forward([[tokens[k]] for k in going], cache, step)  # (r, vocab), cache
        failures.raise_any()

    def _step(
        self, rows: DecodingRows, finite: list[bool], tokens: list[int], on_done: OnDone, failures
    ) -> list[int]:
        """Take each row's next token; report the rows that stop; the batch positions still going."""
        going = []
        for k, prompt in enumerate(rows.prompts):
            generated = rows.generated[k]
            if not finite[k]:
                failures.add(prompt, len(generated) + 1)
                continue
            generated.append(tokens[k])
            if self.stop.stops_after(generated, self.eos, self._decode):
                on_done(prompt, generated)
            else:
                going.append(k)
        return going

    @torch.inference_mode()
    def naive(self, prompt: Sequence[int]) -> list[int]:
        """One sample from scratch: prefill the whole prompt, then decode."""
        answers: dict[int, list[int]] = {}
        self.whole_rows([prompt], answers.__setitem__)
        return answers[0]

    @torch.inference_mode()
    def whole_rows(self, prompts: Sequence[Sequence[int]], on_done: OnDone) -> None:
        """Every prompt prefilled whole and decoded, ``batch_size`` rows at a time: rows of one length
        together, and, where the model pads exactly, prompts of unequal lengths in left-padded batches
        of similar lengths (else one by one); calls ``on_done(i, tokens)``."""
        failures = NonFiniteRows()
        lengths = [len(p) for p in prompts]
        if len(set(lengths)) > 1 and self.batch_size > 1 and self.backend.pads_exactly:
            batches = padded_batches(lengths, self.batch_size)
        else:
            batches = same_length_batches(prompts, range(len(prompts)), self.batch_size)
        for group in batches:
            failures.collect(lambda group=group: self._whole_group(prompts, group, on_done))
        failures.raise_any()

    def _whole_group(self, prompts: Sequence[Sequence[int]], group: list[int], on_done: OnDone) -> None:
        if len({len(prompts[i]) for i in group}) > 1:
            return self._padded_group(prompts, group, on_done)
        if self.hold:
            with self._scaling(len(prompts[group[0]]), through_answer=True):
                return self._prefill_and_decode(prompts, group, on_done)
        self.backend.reset_dynamic_rope()
        return self._prefill_and_decode(prompts, group, on_done)

    def _prefill_and_decode(self, prompts, group: list[int], on_done: OnDone) -> None:
        """Prefill the group's rows, :data:`PREFILL_TOKENS` at a time, and decode them together (a
        cache that cannot be stacked decodes each prefill's rows on their own)."""
        per_forward = max(1, PREFILL_TOKENS // max(1, len(prompts[group[0]])))
        if len(group) <= per_forward:
            logits, cache = self._forward([prompts[i] for i in group])
            return self._continue(logits, cache, group, on_done)
        if not self._stackable:
            failures = NonFiniteRows()
            for part in batches_of(group, per_forward):
                failures.collect(lambda part=part: self._prefill_and_decode(prompts, part, on_done))
            return failures.raise_any()
        filled = []
        for part in batches_of(group, per_forward):
            logits, cache = self._forward([prompts[i] for i in part])  # (p, vocab), cache
            filled.append((logits, layer_tensors(cache)))
        logits = torch.cat([f[0] for f in filled])  # (b, vocab)
        return self._continue(logits, stacked_cache(self.model, [f[1] for f in filled]), group, on_done)

    def _padded_group(self, prompts, group: list[int], on_done: OnDone) -> None:
        """Prompts of unequal lengths (the longest first) left-padded to the longest, prefilled and
        decoded as :meth:`_prefill_and_decode` does; only models that pad exactly come here."""
        width = len(prompts[group[0]])
        per_forward = max(1, PREFILL_TOKENS // width)
        if len(group) > per_forward and not self._stackable:
            failures = NonFiniteRows()
            for part in batches_of(group, per_forward):
                failures.collect(lambda part=part: self._padded_group(prompts, part, on_done))
            return failures.raise_any()
        filled, paddings = [], []
        for part in batches_of(group, per_forward):
            rows, padded = PaddedRows.left_padded([prompts[i] for i in part], width, self.backend.device)
            logits, cache = self._forward(rows, None, padded.prompt_inputs())  # (p, vocab), cache
            filled.append((logits, layer_tensors(cache) if len(group) > per_forward else cache))
            paddings.append(padded)
        logits = torch.cat([f[0] for f in filled])  # (b, vocab)
        cache = stacked_cache(self.model, [f[1] for f in filled]) if len(filled) > 1 else filled[0][1]
        return self._continue(logits, cache, group, on_done, PaddedRows.joined(paddings))

    @torch.inference_mode()
    def shared_prefix(
        self,
        prompts: Sequence[Sequence[int]],
        prefix_lengths: Sequence[int],
        on_done: OnDone,
        prefix_groups: Sequence[int] | None = None,
        reusing: Sequence[bool] | None = None,
    ) -> None:
        """Decode every prompt, the rows of ``reusing`` (all, when None) on the KV cache of their group's
        common prefix, the others prefilled whole; calls ``on_done(i, tokens)``. ``prefix_groups``
        says which prompts share a prefix (all, when None): several cells' prompts of one length then
        decode in one batch, each group's prefix prefilled once, and rows of both routes decode
        together. With dynamic rope every prompt has one length (see :func:`prefix_reuse_is_exact`)."""
        groups = list(prefix_groups) if prefix_groups is not None else [0] * len(prompts)
        reusing = list(reusing) if reusing is not None else [True] * len(prompts)
        order = routed_order(prefix_lengths, groups, reusing)
        shared = _SharedPrefix(self, prompts, prefix_lengths, groups)
        failures = NonFiniteRows()
        for batch in same_length_batches(prompts, order, self.batch_size if self._stackable else 1):
            rows = RoutedBatch.of(batch, reusing)
            failures.collect(lambda rows=rows: self._prefix_batch(prompts, rows, shared, on_done))
        failures.raise_any()

    def _prefix_batch(self, prompts, rows: RoutedBatch, shared: _SharedPrefix, on_done: OnDone) -> None:
        """The batch's rows prefilled by their routes, stacked, then decoded together (inside the held
        scaling with ``hold``, else outside it, as a naive run decodes). A whole row prefilled at the
        held scaling is prefilled as a naive run does: the scaling is its own length's."""
        order = rows.reusing + rows.whole
        with self._scaling(len(prompts[order[0]]), through_answer=self.hold):
            logits, cache = self._prefill_routed(prompts, rows, shared)
            if self.hold:
                return self._continue(logits, cache, order, on_done)
        return self._continue(logits, cache, order, on_done)

    @torch.inference_mode()
    def prefill(
        self, prompts: Sequence[Sequence[int]], prefix_lengths: Sequence[int], reusing: Sequence[bool]
    ):
        """The last logits (b, vocab) and the cache that decoding would start from, for prompts of one
        length sharing one prefix: rows of ``reusing`` past their prefix, the others whole, in the
        order :meth:`shared_prefix` takes them (reusing rows deepest first, then whole rows). It
        exists so a benchmark can time the two routes apart from decoding, through the same code."""
        groups = [0] * len(prompts)
        rows = RoutedBatch.of(routed_order(prefix_lengths, groups, reusing), reusing)
        shared = _SharedPrefix(self, prompts, prefix_lengths, groups)
        with self._scaling(len(prompts[0])):
            return self._prefill_routed(prompts, rows, shared)

    def _prefill_routed(self, prompts, rows: RoutedBatch, shared: _SharedPrefix):
        """The batch's last logits (b, vocab) and its cache, rows reusing a prefix first: each one's rest
        prefilled :data:`~coca_eval.backends.prefix_route.REST_CHUNK` tokens at a time (see that
        module), the whole rows :data:`PREFILL_TOKENS` at a time. A lone row decodes in its own cache
        (for a reusing row, the shared one itself: no copy); several rows in a stack of their caches."""
        lone = len(rows.reusing) + len(rows.whole) == 1
        filled = []
        for i in rows.reusing:
            logits, cache = self._prefill_rest(prompts[i], *shared.cropped_for(i))
            if lone:
                return logits, cache
            filled.append((logits, layer_tensors(cache, copy=True)))
        per_forward = max(1, PREFILL_TOKENS // max(1, len(prompts[(rows.reusing + rows.whole)[0]])))
        for part in batches_of(rows.whole, per_forward):
            logits, cache = self._forward([prompts[i] for i in part])  # (p, vocab), cache
            if lone:
                return logits, cache
            filled.append((logits, layer_tensors(cache)))
        logits = torch.cat([f[0] for f in filled])  # (b, vocab)
        return logits, stacked_cache(self.model, [f[1] for f in filled])

    def _prefill_rest(self, prompt: Sequence[int], cache, keep: int):
        """``prompt`` past its cached first ``keep`` tokens, in forwards of ``REST_CHUNK`` tokens."""
        for start in range(keep, len(prompt), REST_CHUNK):
            logits, cache = self._forward([prompt[start : start + REST_CHUNK]], cache)  # (1, vocab), cache
        return logits, cache

    def _scaling(self, length: int, through_answer: bool = False):
        """Dynamic rope held at the whole prompt's scaling while a piece of it is prefilled (and, with
        ``through_answer``, while the answer is decoded); a no-op for other rotary tables."""
        if self.backend.has_dynamic_rope:
            return self.backend.dynamic_rope_held_at(length, through_answer)
        return nullcontext()


class _SharedPrefix:
    """The KV cache of the current prefix group's longest prefix. Rows come group by group, deepest
    prefix first, so each group's prefix is prefilled once and only ever cropped after that. It is
    filled inside the batch's scaling context (:meth:`GreedyDecoder._prefix_batch`): a context of its
    own nested there would undo the held scaling on its way out."""

    def __init__(self, decoder: GreedyDecoder, prompts, prefix_lengths, groups: list[int]) -> None:
        self.decoder, self.prompts, self.prefix_lengths, self.groups = (
            decoder,
            prompts,
            prefix_lengths,
            groups,
        )
        self.group: int | None = None
        self.cache = None

    def cropped_for(self, i: int):
        """The cache holding exactly prompt ``i``'s shared prefix, and that prefix's length."""
        keep = max(1, self.prefix_lengths[i])
        if self.groups[i] != self.group:  # the group's first row has its longest prefix
            self.group, self.cache = self.groups[i], None
            _, self.cache = self.decoder._forward([self.prompts[i][:keep]])
        crop_to(self.cache, keep)
        return self.cache, keep


def decode_prompts(
    decoder: GreedyDecoder,
    prompts: Sequence[Sequence[int]],
    prefix_lengths: Sequence[int],
    on_done: OnDone,
    prefix_reuse: bool = True,
    prefix_groups: Sequence[int] | None = None,
) -> bool:
    """Decode every prompt by the fastest exact route; returns whether a shared prefix was reused.

    Rows whose shared prefix saves more than reusing it costs (:mod:`~coca_eval.backends.prefix_route`)
    reuse it; the others are prefilled whole. No prompts is nothing to do (a resumed cell whose samples
    are all journaled), as in the vLLM backend.
    """
    if not prompts:
        return False
    groups = list(prefix_groups) if prefix_groups is not None else [0] * len(prompts)
    reusing = [False] * len(prompts)
    if prefix_reuse and len(prompts) > 1 and prefix_reuse_is_exact(decoder.backend, prompts):
        cost = PrefillCost.of(decoder.model)
        lengths = [len(p) for p in prompts]
        reusing = rows_reusing(cost, lengths, prefix_lengths, groups) if cost else [True] * len(prompts)
    if not any(reusing):
        decoder.whole_rows(prompts, on_done)
        return False
    decoder.shared_prefix(prompts, prefix_lengths, on_done, groups, reusing)
    return True


def prefix_reuse_is_exact(backend, prompts: Sequence[Sequence[int]]) -> bool:
    """Whether cached prefixes give the very outputs a fresh per-sample run gives (see module doc)."""
    if slides(backend.model.config.get_text_config()):
        return False
    return not backend.has_dynamic_rope or len({len(p) for p in prompts}) == 1
