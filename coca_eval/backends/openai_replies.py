"""The shapes of a completions server's replies, checked before anything reads them.

A proxy, an older server or another API behind ``--base-url`` can answer with JSON of another shape;
read blindly, it ends in a ``KeyError`` deep inside a run. Every reply is validated against these
models first, and a mismatch becomes one line naming the field that was wrong. Fields the backend
does not read are ignored, so servers may add their own.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from coca_eval.errors import CocaEvalError


class ModelEntry(BaseModel):
    id: str


class ModelList(BaseModel):
    """``GET /models``."""

    data: list[ModelEntry]


class ChoiceLogprobs(BaseModel):
    tokens: list[str] | None = None  # ``token_id:N`` with vLLM's return_tokens_as_token_ids
    token_logprobs: list[float | None] | None = None  # with echo: one per prompt token, first None


class Choice(BaseModel):
    index: int
    text: str | None = None
    logprobs: ChoiceLogprobs | None = None
    token_ids: list[int] | None = None  # vLLM's return_token_ids


class Completion(BaseModel):
    """``POST /completions``."""

    choices: list[Choice]


class ChatMessage(BaseModel):
    content: str | None = None
    reasoning_content: str | None = None  # a reasoning model's thought: vLLM's older name, DeepSeek's
    reasoning: str | None = None  # the same under its newer name (vLLM, OpenRouter)


class ChatTokenLogprob(BaseModel):
    logprob: float | None = None


class ChatLogprobs(BaseModel):
    content: list[ChatTokenLogprob] | None = None  # one per answer token, with ``logprobs: true``


class ChatChoice(BaseModel):
    index: int
    message: ChatMessage
    token_ids: list[int] | None = None  # vLLM's return_token_ids
    logprobs: ChatLogprobs | None = None
    finish_reason: str | None = None

    def answer_logprobs(self) -> list[float | None]:
        return [entry.logprob for entry in (self.logprobs.content or [])] if self.logprobs else []


class CompletionDetails(BaseModel):
    reasoning_tokens: int | None = None


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens_details: CompletionDetails | None = None  # a reasoning model's thought, counted


class ChatCompletion(BaseModel):
    """``POST /chat/completions`` (one conversation, one choice). ``usage`` is the API's own; vLLM
    adds ``prompt_token_ids`` under ``return_token_ids``."""

    choices: list[ChatChoice]
    usage: Usage | None = None
    prompt_token_ids: list[int] | None = None


Reply = TypeVar("Reply", bound=BaseModel)
_JSON_TYPES = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def _where(loc: tuple) -> str:
    """``("choices", 0, "index")`` -> ``choices[0].index``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _problem(error: dict[str, Any]) -> str:
    """One pydantic error in words: a missing field names its parent, anything else its own place."""
    loc = tuple(error["loc"])
    if error["type"] == "missing":
        parent = _where(loc[:-1])
        return f"{parent} has no {loc[-1]!r}" if parent else f"no {loc[-1]!r}"
    return f"{_where(loc) or 'the whole reply'}: {error['msg']}"


def parse_reply(shape: type[Reply], reply: Any, where: str) -> Reply:
    """``reply`` (decoded JSON) as ``shape``; ``where`` says whose reply to what, for the message."""
    if not isinstance(reply, dict):
        kind = "null" if reply is None else _JSON_TYPES.get(type(reply), type(reply).__name__)
        raise CocaEvalError(f"{where} is {kind}, not a JSON object")
    try:
        return shape.model_validate(reply)
    except ValidationError as exc:
        raise CocaEvalError(f"{where} is malformed: {_problem(exc.errors()[0])}") from None


def ordered_choices(completion: Completion, prompts: int, where: str) -> list[Choice]:
    """The choices in prompt order; exactly one per prompt, indexed ``0 .. prompts - 1``."""
    indices = sorted(choice.index for choice in completion.choices)
    if indices != list(range(prompts)):
        shown = ", ".join(map(str, indices[:8])) + (", ..." if len(indices) > 8 else "")
        raise CocaEvalError(
            f"{where} has choices indexed [{shown}] for {prompts} prompt(s); expected one per prompt"
        )
    return sorted(completion.choices, key=lambda choice: choice.index)
