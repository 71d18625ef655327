"""What every generation family's parameters share: what a length N counts, how ``--samples`` is
checked, the backends a family cannot run as hf does, and the parameters of the families whose
effective length is read relative to their own shortest length (HELMET, BABILong)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from coca_eval.errors import CocaEvalError
from coca_eval.params import check_chat_template, require_positive_int
from coca_eval.sequential import StoppingRule

PROMPT_AND_ANSWER, PROMPT_ONLY = "prompt+answer", "prompt"
LENGTH_COUNTS = (PROMPT_AND_ANSWER, PROMPT_ONLY)
"""What a length N counts: RULER's prompt + answer budget = N (the prompt is N minus the task's budget),
or the prompt alone (the answer decoded past N), this project's meaning before it matched RULER's."""


def check_sampling(params: Any) -> None:
    """``--samples N``, or ``auto`` with ``--max-samples`` and a rule it can follow, in points (0-100)."""
    if params.samples != "auto":
        require_positive_int("--samples", params.samples)
        rule_options = ("max_samples", "target_width")
        given = [f"--{k.replace('_', '-')}" for k in rule_options if getattr(params, k) is not None]
        if given:
            raise CocaEvalError(f"{', '.join(given)} only apply with --samples auto")
        return
    count = params.max_samples
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise CocaEvalError(f"--samples auto needs --max-samples, a positive integer (got {count!r})")
    width = params.target_width
    if width is not None and (isinstance(width, bool) or not 0 < float(width) < 100):
        raise CocaEvalError(f"--target-width must be a score width in (0, 100) points (got {width!r})")
    if width is None and not 0 < float(params.threshold) < 100:
        raise CocaEvalError(
            f"--samples auto stops a cell once its interval lies above or below --threshold, which must "
            f"then lie in (0, 100) (got {params.threshold!r}); or give --target-width"
        )


def refuse_vllm_dynamic(methods) -> None:
    """vLLM's engine holds the prompt's dynamic NTK base through the answer, where transformers
    rescales it per token: a generation task's numbers would not be hf's."""
    for method in methods:
        if method.backend == "vllm" and method.rope.kind == "dynamic":
            raise CocaEvalError(
                f"{method.label}: --backend vllm holds dynamic rope at the prompt's scaling through the "
                "answer, which hf does not; use --backend hf for dynamic rope patches"
            )


class RelativeBarParams:
    """What the families whose effective length is read at ``share`` % of their own shortest length
    (HELMET, BABILong) share on top of :class:`~coca_eval.params.SampledCells`: no fixed bar, so
    ``--samples auto`` stops on ``--target-width`` alone; ``share`` changes no cell and stays out of
    the identity; files are named by content fingerprint, keywords (``KEYWORDS``) and hub names
    (:meth:`names_the_hub`) as they are."""

    KEYWORDS = ("books", "auto", "none")
    OPTIONAL = ("max_samples", "target_width", "data")  # left out of the identity when unset
    FILES = ("haystack", "data", "chat_template")  # named by their content's fingerprint

    @property
    def threshold(self) -> float:
        return self.share

    def names_the_hub(self, option: str, value: str) -> bool:
        """Whether ``value`` of ``option`` names something on the hub rather than a local path."""
        return False

    def identity(self) -> dict[str, Any]:
        from coca_eval.data.sources import source_fingerprint

        values = asdict(self)
        del values["share"]
        for name in self.OPTIONAL:
            if values.get(name) is None:
                values.pop(name, None)
        for name in self.FILES:
            value = values.get(name)
            if value is not None and value not in self.KEYWORDS and not self.names_the_hub(name, value):
                values[name] = source_fingerprint(value)
        return values

    def stopping_rule(self) -> StoppingRule | None:
        if self.samples != "auto":
            return None
        return StoppingRule(self.max_samples, target_width=self.target_width / 100)

    def check_relative(self, family: str, paths: tuple[str, ...]) -> None:
        """The checks both families make once their own are done: the share, ``auto``'s target
        width, local paths that must exist, the chat template."""
        if isinstance(self.share, bool) or not 0 < float(self.share) <= 100:
            raise CocaEvalError(f"--share must be a percentage in (0, 100] (got {self.share!r})")
        if self.samples == "auto" and self.target_width is None:
            raise CocaEvalError(
                f"--samples auto needs --target-width for {family}: its effective length is read relative "
                "to the shortest length, so there is no fixed score for a cell to clear"
            )
        for name in paths:
            value = getattr(self, name)
            if value is None or value in self.KEYWORDS or self.names_the_hub(name, value):
                continue
            if not Path(value).expanduser().exists():
                raise CocaEvalError(f"--{name.replace('_', '-')} {value}: no such file or directory")
        check_chat_template(self.chat_template)
