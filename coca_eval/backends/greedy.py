"""The greedy call every backend answers: its signature, its options and their defaults, in one place.

A task decodes through ``backend.generate_greedy`` whichever backend its method names, so the call must
mean the same on each. :class:`GreedyBackend` holds that call once: it reads the keyword options into a
:class:`GreedyOptions` (an unknown one is a ``TypeError``, as for any keyword) and the stop into a
:class:`~coca_eval.backends.stopping.StopRule`, then hands both to the backend's own
``_decode_greedy``. Each backend says there what the options mean on it, or why one has nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from coca_eval.backends.stopping import StopRule, stop_rule

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11 on

OnDone = Callable[[int, list[int]], None]  # (prompt index, answer token ids), once per prompt


class GreedyKeywords(TypedDict, total=False):
    """The keyword options of ``generate_greedy``; :class:`GreedyOptions` gives their meaning."""

    prefix_reuse: bool
    hold_dynamic_rope: bool
    batch_size: int | None
    prefix_groups: Sequence[int] | None


@dataclass(frozen=True)
class GreedyOptions:
    """How one greedy call may decode. Only ``hold_dynamic_rope`` can change an answer; the others
    change the work done for it.

    * ``prefix_reuse``: prompts may share the computation of their common prefix (a KV cache, a
      server's prefix cache); False decodes every prompt from scratch.
    * ``hold_dynamic_rope``: the answer keeps the prompt's dynamic rope scaling instead of rescaling
      with every generated token (a model without dynamic rope ignores it).
    * ``batch_size``: rows decoded at once (None: as many as the backend finds room for).
    * ``prefix_groups``: one group per prompt; prompts of a group share a prefix (None: all share
      one), so one call may hold several cells' prompts.
    """

    prefix_reuse: bool = True
    hold_dynamic_rope: bool = False
    batch_size: int | None = None
    prefix_groups: Sequence[int] | None = None


class GreedyBackend:
    """The ``generate_greedy`` of every backend; a backend implements :meth:`_decode_greedy`."""

    def generate_greedy(
        self,
        prompts: Sequence[Sequence[int]],
        prefix_lengths: Sequence[int],
        stop: StopRule | int,
        on_done: OnDone,
        **options: Unpack[GreedyKeywords],
    ) -> bool:
        """Greedy answers to ``prompts`` under the task's ``stop`` rule (or a bare token budget), each
        handed to ``on_done`` once; the first ``prefix_lengths[i]`` tokens of prompt ``i`` are the prefix
        it shares with its group. Returns whether a shared prefix was reused."""
        read = GreedyOptions(**options)
        return self._decode_greedy(prompts, prefix_lengths, stop_rule(stop), on_done, read)

    def _decode_greedy(
        self, prompts, prefix_lengths, stop: StopRule, on_done: OnDone, options: GreedyOptions
    ) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not generate")
