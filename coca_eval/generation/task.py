"""What the generation tasks (passkey, RULER) share as cell runners: how they are set up, what keys
their cells, and whether a model preset wants BOS in front of their prompts.

Both answer prompts by greedy decoding, journal each sample's answer, split samples over processes
(``--shard``, torchrun) and may sample in rounds (``--samples auto``), which one process must decide.
"""

from __future__ import annotations

from typing import Any

from coca_eval.distributed.share import WHOLE, Share
from coca_eval.errors import CocaEvalError, NonFiniteOutput
from coca_eval.generation.thinking import Thinking
from coca_eval.journal import Journal
from coca_eval.methods import MethodSpec
from coca_eval.progress import CellProgress

PRESET_BOS = "auto (the preset's documents start with BOS)"  # in a cell's identity: not a cold reading


def preset_puts_bos(params: Any, model: str | None) -> bool:
    """Whether ``--bos auto`` puts BOS in front because ``model`` is a preset trained on documents that
    each follow its BOS token, which its tokenizer does not add (``prompt_starts_with_bos``). The prompt
    builder and the cell key both ask this one question, so a cold reading never shares a journal key
    with it."""
    from coca_eval.models.presets import MODEL_PRESETS

    return params.bos == "auto" and model in MODEL_PRESETS and MODEL_PRESETS.get(model).prompt_starts_with_bos


def sample_error(exc: NonFiniteOutput, indices: dict[int, int]) -> NonFiniteOutput | None:
    """The error of a call's failed prompts that belong to a cell, named by the cell's sample index:
    ``indices`` maps a prompt's place in the call to its sample index. None when none of the cell's
    prompts failed; the backend's own error when it could not say which prompt failed."""
    if not exc.rows:
        return exc
    mine = sorted(p for p in exc.rows if p in indices)
    if not mine:
        return None
    first = mine[0]
    return NonFiniteOutput(exc.rows[first].replace(f"sample {first}:", f"sample {indices[first]}:", 1))


def keeping(exc: NonFiniteOutput, parts: dict[str, dict], kept) -> NonFiniteOutput:
    """``exc`` carrying the journaled records ``parts`` of the sample indices ``kept`` (those answered
    from finite logits, still the cell's samples), in index order: the error cell keeps them, as the
    journal does, so one failed prompt names itself and costs nothing else."""
    samples = [parts[str(i)] for i in sorted(int(i) for i in kept)]
    return NonFiniteOutput(str(exc), exc.rows, samples)


class GenerationTask:
    """The common part of a generation task's :class:`~coca_eval.runner.CellTask`: ``name`` and
    ``version`` (the subclass's) enter every cell key."""

    name: str
    version: int
    decodes_thoughts = False  # whether thoughts are decoded apart (the base's runner does; passkey not yet)
    thinking = Thinking()  # the defaults, until a run's settings are given

    def __init__(
        self,
        params: Any,
        journal: Journal,
        progress: CellProgress,
        prefix_reuse: bool = True,
        share: Share = WHOLE,
        batch_size: int | None = None,
        thinking=None,
        **_: object,
    ):
        self.params, self.journal, self.progress = params, journal, progress
        self.thinking = thinking or Thinking()  # changes numbers: enters the cell keys when not default
        if not self.thinking.default and not self.decodes_thoughts:
            raise CocaEvalError(
                f"{self.name} does not take --thinking, --think-budget or --think-markers yet"
            )
        self.prefix_reuse, self.share = prefix_reuse, share
        self.batch_size = batch_size  # rows decoded together (None: auto); never changes an output
        if params.samples == "auto" and not share.whole:
            raise CocaEvalError(
                "--samples auto decides after each round of samples in one process; leave out --shard "
                "and torchrun, or give a fixed --samples N"
            )

    def identity(self, method: MethodSpec, weights: str, length: int) -> dict[str, Any]:
        """What keys a cell: the task and its version, method, weights, the parameters but the lengths
        (a cell is one length), the length, and BOS where a preset put it in front."""
        identity = {
            "task": self.name,
            "version": self.version,
            "method": method.identity(),
            "weights": weights,
            "params": {**self.params.identity(), "lengths": None},
            "length": length,
        }
        if preset_puts_bos(self.params, method.model):
            identity["params"]["bos"] = PRESET_BOS
        return identity

    def dump_prompts(self, run, methods, directory) -> None:
        """``--dump-prompts``: the run's samples as the prompts the model saw (see
        :mod:`coca_eval.generation.dump`), built by this task's ``prepare`` and ``build_samples``."""
        from coca_eval.generation.dump import dump_run_prompts

        dump_run_prompts(self, run, methods, directory)
