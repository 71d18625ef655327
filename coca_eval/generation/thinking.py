"""Thinking settings of a generation run (``--thinking``, ``--think-budget``, ``--think-markers``) and
the plan they make for one loaded model.

A reasoning model spends its first tokens on a thought between an open and a close marker
(``<think>`` ... ``</think>``) before it answers. Decoded inside a task's answer budget, the thought
eats the budget and the task scores the thought, so it scores zero. With a plan, the generation base
decodes the thought first, up to its own budget, then the answer with the task's own budget
(:mod:`coca_eval.generation.thought`).

``auto`` keeps the model's own default: the chat template is rendered as it is, and a thought is
decoded apart when that default is to think (the template takes ``enable_thinking`` and renders the
same with it on as without it). A model whose template knows nothing of thinking gets no plan, so
its prompts, outputs and records are those of a run made before these options existed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError

THINKING_MODES = ("auto", "on", "off")
DEFAULT_THINK_BUDGET = 4096
"""Thought tokens a model may decode when ``--think-budget`` is not given."""

TEMPLATE_VARIABLE = "enable_thinking"

KNOWN_MARKERS = (
    ("<think>", "</think>"),  # Qwen3, DeepSeek-R1, QwQ, Nemotron, MiniMax
    ("<thinking>", "</thinking>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),  # Command A Reasoning
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),  # Kimi
)
"""Marker pairs looked for in a tokenizer's added tokens and its chat template, in this order."""


@dataclass(frozen=True)
class Thinking:
    """What the three options say, checked before any model loads."""

    mode: str = "auto"
    budget: int | None = None
    markers: tuple[str, str] | None = None
    effort: str | None = None  # a chat API's reasoning_effort, passed on as it is

    @classmethod
    def of(
        cls, mode: str | None, budget: int | None, markers: str | None, effort: str | None = None
    ) -> Thinking:
        """The settings from the options' values (None: not given), each checked in one line."""
        mode = mode or "auto"
        if mode not in THINKING_MODES:
            raise CocaEvalError(f"--thinking must be one of {', '.join(THINKING_MODES)} (got {mode!r})")
        if effort is not None and (not effort.strip() or mode == "off"):
            raise CocaEvalError(f"--reasoning-effort {effort!r} needs a word and thinking not off")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise CocaEvalError(f"--think-budget must be a whole number of tokens from 1 (got {budget!r})")
        pair = None
        if markers is not None:
            parts = [part.strip() for part in markers.split(",")]
            if len(parts) != 2 or not all(parts):
                raise CocaEvalError(
                    f"--think-markers takes OPEN,CLOSE, two non-empty markers (got {markers!r})"
                )
            pair = (parts[0], parts[1])
        return cls(mode, budget, pair, effort)

    @property
    def default(self) -> bool:
        return self == Thinking()

    def identity(self) -> dict | None:
        """What enters a cell's journal key: nothing for the defaults (keys of runs made before these
        options existed stay valid), else every setting."""
        if self.default:
            return None
        identity = {"mode": self.mode, "budget": self.budget, "markers": list(self.markers or ()) or None}
        return identity | ({"effort": self.effort} if self.effort else {})

    def variables(self, template: str | None) -> dict:
        """The extra variables the chat template is rendered with: ``enable_thinking`` for ``on`` and
        ``off`` where the template takes it; none for ``auto`` (the template's own default)."""
        if self.mode == "auto" or not takes_thinking(template):
            return {}
        return {TEMPLATE_VARIABLE: self.mode == "on"}

    def check_template(self, chat_template: str) -> None:
        """``--thinking on`` needs a template that takes ``enable_thinking``: refused before any model
        loads for ``none`` and a template file (``auto`` is checked once the tokenizer is loaded)."""
        if self.mode != "on" or chat_template == "auto":
            return
        if chat_template == "none":
            raise CocaEvalError("--thinking on needs a chat template that takes enable_thinking, not none")
        try:
            text = Path(chat_template).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return  # the chat template's own check names the unreadable file
        refuse_without_variable(text, f"chat template {chat_template}")

    def bound(self, template: str | None) -> str | None:
        """``template`` with this run's variables bound in its text, for a family that renders the
        template's text itself (MRCR's conversations, HELMET's and LongBench's own protocols,
        BABILong's prepared sets): see :func:`bound_template`."""
        return bound_template(template, self.variables(template))


def bound_template(template: str | None, variables: dict) -> str | None:
    """``template`` with ``variables`` set at its top (``{% set enable_thinking = true %}``, no output
    of its own): rendered without them, it renders what the template renders with them passed, so a
    family that hands the template's text to ``apply_chat_template`` itself needs no other change."""
    if template is None or not variables:
        return template
    sets = "".join(f"{{% set {name} = {json.dumps(value)} %}}" for name, value in variables.items())
    return sets + template


def takes_thinking(template: str | None) -> bool:
    """Whether a chat template reads ``enable_thinking`` (Qwen3's, DeepSeek's, and ours in tests)."""
    return template is not None and TEMPLATE_VARIABLE in template


def refuse_without_variable(template: str | None, name: str) -> None:
    if not takes_thinking(template):
        raise CocaEvalError(
            f"--thinking on: {name} does not take {TEMPLATE_VARIABLE}, so it cannot turn thinking on"
        )


@dataclass(frozen=True)
class ThoughtPlan:
    """How one loaded model's thoughts are decoded: the markers as token ids, the thought budget and
    what a cell records of it."""

    open_marker: str
    close_marker: str
    open_ids: tuple[int, ...]
    close_ids: tuple[int, ...]
    budget: int
    mode: str

    def context(self) -> dict:
        """What a cell records of how its thoughts were decoded (the gate pairs on these)."""
        return {
            "thinking": "on",
            "think_budget": self.budget,
            "think_markers": [self.open_marker, self.close_marker],
        }


def find_markers(tokenizer, template: str | None) -> tuple[str, str] | None:
    """The first known marker pair whose close marker is one of the tokenizer's added tokens or
    appears in its chat template; None when there is none."""
    added = set(getattr(tokenizer, "get_added_vocab", dict)() or {})
    for open_marker, close_marker in KNOWN_MARKERS:
        if close_marker in added or (template is not None and close_marker in template):
            return open_marker, close_marker
    return None


def thought_plan(
    thinking: Thinking, template: str | None, tokenizer, thinks_by_default
) -> ThoughtPlan | None:
    """The plan for a model whose chat template is ``template`` (None: no template), or None when its
    thoughts are not decoded apart. ``thinks_by_default()`` says whether the template's default is to
    think (asked only for ``auto``). Refuses ``on`` where the template cannot turn thinking on or no
    markers are known."""
    if thinking.mode == "off":
        return None
    if thinking.mode == "on":
        refuse_without_variable(template, "the chat template")
    elif not takes_thinking(template) or not thinks_by_default():
        return None
    markers = thinking.markers or find_markers(tokenizer, template)
    if markers is None:
        if thinking.mode == "auto":
            return None
        raise CocaEvalError(
            "--thinking on: no thought markers found in the tokenizer or its chat template; give "
            "--think-markers OPEN,CLOSE"
        )
    encode = lambda text: tuple(tokenizer(text, add_special_tokens=False).input_ids)  # noqa: E731
    budget = thinking.budget or DEFAULT_THINK_BUDGET
    return ThoughtPlan(*markers, encode(markers[0]), encode(markers[1]), budget, thinking.mode)


@dataclass(frozen=True)
class ModelThinking:
    """One loaded model under the run's thinking settings: its plan (None: no thought decoded apart)
    and what its cells record of thinking (nothing for a model whose template knows nothing of it, so
    such a run's results are byte for byte those of a run made before these options existed)."""

    plan: ThoughtPlan | None
    context: dict


def model_thinking(thinking: Thinking, params, backend, chat_template: str | None = None) -> ModelThinking:
    """The plan and cell context for the model ``backend`` holds, under the run's ``params`` (its
    ``--chat-template``). A backend that sizes its engine up front (vLLM) is given room for the thought
    past the run's longest sequence: the answer follows prompt + thought, and an engine sized for N
    alone would cut it short. ``chat_template``: the option in force where it is not
    ``params.chat_template`` as given (passkey's ``preset``, resolved per model)."""
    from coca_eval.chat import renders_alike, template_text

    tokenizer = backend.tokenizer
    template = template_text(chat_template or params.chat_template, tokenizer)
    default = lambda: renders_alike(template, tokenizer, {TEMPLATE_VARIABLE: True})  # noqa: E731
    plan = thought_plan(thinking, template, tokenizer, default)
    reserve = getattr(backend, "reserve", None)
    if plan is not None and callable(reserve):
        reserve(params.longest_sequence() + plan.budget)  # every generation family's params say it
    if plan is not None:
        effort = {"reasoning_effort": thinking.effort} if thinking.effort else {}
        return ModelThinking(plan, plan.context() | effort)
    return ModelThinking(None, {"thinking": "off"} if takes_thinking(template) else {})


def chat_thinking(
    thinking: Thinking, plan: ThoughtPlan | None, chat: bool, chat_template: str, tokenizer
) -> dict:
    """The ``thinking`` argument of a chat API call (:mod:`coca_eval.backends.openai_chat`), as keyword
    arguments: none without a thought plan. ``--reasoning-effort`` reaches a chat API only, and only
    with a thought decoded: elsewhere it is refused rather than ignored."""
    if thinking.effort and (not chat or plan is None):
        where = "a chat API (--backend openai with a chat template)" if not chat else "a thinking model"
        raise CocaEvalError(f"--reasoning-effort is passed to {where} only")
    if not chat or plan is None:
        return {}
    from coca_eval.backends.openai_chat import ChatThinking
    from coca_eval.chat import template_text

    variables = thinking.variables(template_text(chat_template, tokenizer))
    return {"thinking": ChatThinking(plan.budget, plan.close_ids, variables, thinking.effort)}


def thought_room(plan: ThoughtPlan | None, length_counts: str) -> int:
    """Tokens of N a thought takes under ``--length-counts`` ``length_counts``: its budget with
    ``prompt+answer+thought`` (the prompt is that much shorter), else none (the thought is past N)."""
    from coca_eval.generation.params import WITH_THOUGHT

    return plan.budget if plan is not None and length_counts == WITH_THOUGHT else 0
