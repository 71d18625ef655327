"""The bookkeeping of a batch decoded on the hf backend (:mod:`~coca_eval.backends.hf_generation`):
which rows are still decoding, which prefill route each row takes and in what order, how rows are
cut into batches of one length, the rows stopped by non-finite logits, and the cache's tensors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from coca_eval.errors import NonFiniteOutput


@dataclass
class DecodingRows:
    """The rows still decoding: each one's prompt index and tokens so far, in batch order."""

    prompts: list[int]
    generated: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.generated = [[] for _ in self.prompts]

    def keep(self, going: list[int]) -> None:
        self.prompts = [self.prompts[k] for k in going]
        self.generated = [self.generated[k] for k in going]


@dataclass
class RoutedBatch:
    """One batch's rows by prefill route: those reusing their group's prefix, and those prefilled whole."""

    reusing: list[int]
    whole: list[int]

    @classmethod
    def of(cls, batch: Sequence[int], reusing: Sequence[bool]) -> RoutedBatch:
        return cls([i for i in batch if reusing[i]], [i for i in batch if not reusing[i]])


class NonFiniteRows:
    """Rows stopped by non-finite logits, raised together once every other row is answered."""

    def __init__(self) -> None:
        self.found: list[NonFiniteOutput] = []

    def add(self, prompt: int, step: int) -> None:
        text = f"sample {prompt}: non-finite logits at answer token {step}"
        self.found.append(NonFiniteOutput(text, {prompt: text}))

    def collect(self, call: Callable[[], None]) -> None:
        try:
            call()
        except NonFiniteOutput as exc:
            self.found.append(exc)

    def raise_any(self) -> None:
        if self.found:
            raise NonFiniteOutput.of_rows(self.found)


def routed_order(prefix_lengths: Sequence[int], groups: Sequence[int], reusing: Sequence[bool]) -> list[int]:
    """Rows group by group (in the order the groups first appear), each group's reusing rows first and
    deepest prefix first, so its prefix is prefilled once and only cropped after that."""
    first_seen = {g: n for n, g in reversed(list(enumerate(groups)))}
    return sorted(
        range(len(groups)), key=lambda i: (first_seen[groups[i]], not reusing[i], -prefix_lengths[i])
    )


def batches_of(indices, size: int) -> list[list[int]]:
    indices = list(indices)
    return [indices[lo : lo + size] for lo in range(0, len(indices), size)]


def same_length_batches(prompts: Sequence[Sequence[int]], order, size: int) -> list[list[int]]:
    """``order`` cut into batches of at most ``size`` prompts of one length, keeping the order."""
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < size and len(prompts[batches[-1][0]]) == len(prompts[i]):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def layer_tensors(cache, copy: bool = False) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The filled keys and values of every layer, copied when the cache is overwritten next (the shared
    prefix's cache is cropped and refilled for the next row)."""
    if copy:
        return [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]  # (r, h, n, d) each
    return [(layer.keys, layer.values) for layer in cache.layers]  # (r, h, n, d) each


def crop_to(cache, keep: int) -> None:
    """Drop cached positions beyond ``keep`` (a negative ``crop`` removes that many, in every version)."""
    surplus = cache.get_seq_length() - keep
    if surplus > 0:
        cache.crop(-surplus)
