"""Parameters of the passkey task, validated before any model loads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import StrictFloat, StrictInt, StrictStr

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import words_of
from coca_eval.params import (
    CHAT_KEYWORDS,
    PositiveCount,
    PresetLengths,
    PresetParams,
    SampledCells,
    check_chat_template,
    normalise_task_values,
    require_choice,
    require_positive_int,
)
from coca_eval.params import (
    PROMPT_BOS_CHOICES as BOS_CHOICES,
)
from coca_eval.passkey.prompts import parse_depths
from coca_eval.passkey.templates import TEMPLATES
from coca_eval.sequential import StoppingRule, check_rule

CHAT_PRESET = "preset"
"""``--chat-template preset``: the model preset's choice, its chat template for an instruction-tuned
preset (``smollm2-135m``) and none for every other model, so existing readings keep their prompts."""
DYNAMIC_ROPE_CHOICES = ("rescale", "hold")
"""How dynamic rope scaling treats the answer: ``rescale`` with every generated token (transformers),
or ``hold`` the prompt's scaling (vLLM's engine). The prompt itself is read at its own length either way."""
SEQUENTIAL_KEYS = ("max_samples", "target_width", "threshold")  # the stopping rule of --samples auto


@dataclass(frozen=True)
class PasskeyParams(SampledCells):
    """Everything that changes a passkey number (``prefix_reuse`` and the device do not)."""

    lengths: tuple[int, ...] = field(default=(512, 1024, 2048))
    samples: int | str = 100  # or "auto": sample in rounds until the stopping rule below is met
    seed: int = 0
    max_new_tokens: int = 64
    depths: str = "stratified"
    template: str = "landmark"
    bos: str = "auto"  # BOS in front of the prompt: the tokenizer's default, always, or never
    dynamic_rope: str = "rescale"  # see DYNAMIC_ROPE_CHOICES
    chat_template: str = CHAT_PRESET  # preset | auto | none | a Jinja file (see chat_option)
    max_samples: int | None = None  # --samples auto: the most samples a cell may spend
    target_width: float | None = None  # --samples auto: stop once the interval is narrower than this
    threshold: float | None = None  # --samples auto: stop once the interval lies wholly above or below

    def identity(self) -> dict[str, Any]:
        """The fields that change a number; ``bos``, ``dynamic_rope``, ``chat_template`` and the stopping
        rule only when they are not the default, so the default keeps the identity (and journals) it had
        before the options existed. A template file enters by its content."""
        from coca_eval.data.sources import source_fingerprint

        values = asdict(self)
        defaults = (
            ("bos", "auto"),
            ("dynamic_rope", "rescale"),
            ("chat_template", CHAT_PRESET),
            *((k, None) for k in SEQUENTIAL_KEYS),
        )
        for name, default in defaults:
            if values[name] == default:
                del values[name]
        if values.get("chat_template") not in (None, *CHAT_KEYWORDS):
            values["chat_template"] = source_fingerprint(values["chat_template"])
        return values

    def stopping_rule(self) -> StoppingRule | None:
        """The rule of ``--samples auto``, or None for a fixed sample count."""
        if self.samples != "auto":
            return None
        return StoppingRule(self.max_samples, self.target_width, self.threshold)

    def longest_sequence(self) -> int:
        """Prompt plus answer: what engines that size their context up front must hold."""
        return max(self.lengths) + self.max_new_tokens


class PasskeyPresetParams(PresetParams):
    """What a passkey preset file may set, in YAML's types (one depth fraction reads as a number)."""

    lengths: PresetLengths = None
    samples: PositiveCount | Literal["auto"] = None
    max_samples: PositiveCount = None
    target_width: StrictFloat = None
    threshold: StrictFloat = None
    seed: StrictInt = None
    max_new_tokens: PositiveCount = None
    depths: StrictStr | StrictFloat = None
    template: StrictStr = None
    bos: Literal[BOS_CHOICES] = None
    dynamic_rope: Literal[DYNAMIC_ROPE_CHOICES] = None
    chat_template: StrictStr = None


def check_methods(params: PasskeyParams, methods) -> None:
    """Refuse, before any model loads, an answer protocol a backend cannot follow: vLLM's engine holds
    the prompt's dynamic NTK base through the answer and cannot rescale per token as transformers does."""
    if params.dynamic_rope != "rescale":
        return
    for method in methods:
        if method.backend == "vllm" and method.rope.kind == "dynamic":
            raise CocaEvalError(
                f"{method.label}: --backend vllm holds dynamic rope at the prompt's scaling through the "
                "answer; pass --dynamic-rope hold (per-token rescaling is transformers', --backend hf)"
            )


def make_passkey_params(values: dict[str, Any]) -> PasskeyParams:
    values = normalise_task_values(values, PasskeyParams.__dataclass_fields__, "passkey")
    if values.get("depths") is not None:
        values["depths"] = str(values["depths"])
    params = PasskeyParams(**values)
    require_positive_int("--max-new-tokens", params.max_new_tokens)
    if params.samples == "auto":
        check_rule(params.max_samples, params.target_width, params.threshold)
    else:
        params.check_fixed_count(SEQUENTIAL_KEYS)
    parse_depths(params.depths)
    TEMPLATES.get(params.template)
    require_choice("--bos", params.bos, BOS_CHOICES)
    require_choice("--dynamic-rope", params.dynamic_rope, DYNAMIC_ROPE_CHOICES)
    if params.chat_template != CHAT_PRESET:
        check_chat_template(params.chat_template)
    return params


def shortest_length(params: PasskeyParams) -> tuple[int, str]:
    """Passkey's N is its prompt: the template's intro, key line and question, and some filler."""
    template = TEMPLATES.get(params.template)
    words = words_of(template.intro, template.key_text(0), template.question)
    return words + 1, (
        f"the {template.name} template's intro, key line and question: {words} words, a token each at "
        "least, and one token of filler"
    )


def chat_option(params: PasskeyParams, model: str | None) -> str:
    """The ``--chat-template`` in force for ``model``: ``preset`` resolved to ``auto`` for a model
    preset read through its template by default (an instruction-tuned one), else ``none``."""
    if params.chat_template != CHAT_PRESET:
        return params.chat_template
    from coca_eval.models.presets import MODEL_PRESETS

    chat = model in MODEL_PRESETS and MODEL_PRESETS.get(model).chat_by_default
    return "auto" if chat else "none"
