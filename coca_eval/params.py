"""Checks shared by every task's parameter dataclass (presets overlaid with command-line options)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, StrictInt

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import parse_lengths

PositiveCount = Annotated[StrictInt, Field(ge=1)]  # strict: YAML's "5" or true is not a count


def check_preset_lengths(value: Any) -> Any:
    """A preset's ``lengths``: the ``--lengths`` grammar as text, or a list of token counts. A bare
    number is refused too: it is most likely a range whose quotes or ``..`` went missing."""
    if isinstance(value, str):
        try:
            parse_lengths(value)
        except CocaEvalError as exc:
            raise ValueError(str(exc)) from None
        return value
    if isinstance(value, list) and value and all(_is_positive_int(v) for v in value):
        return value
    raise ValueError(f"expected text such as 512..4k or a list of positive integers (got {value!r:.60})")


def _is_positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


PresetLengths = Annotated[Any, PlainValidator(check_preset_lengths)]


class PresetParams(BaseModel):
    """Base of a task's preset-parameter model: the types a YAML file must give, checked when the file
    is read so a wrong one names the file and the field. Fields default to None (left out of the
    file); an explicit ``null`` is refused unless the field's type allows None."""

    model_config = ConfigDict(extra="forbid")


def normalise_task_values(values: dict, fields: dict, task: str) -> dict:
    """Known parameter names only; ``lengths`` parsed (grammar or list) into a sorted tuple."""
    unknown = set(values) - set(fields)
    if unknown:
        raise CocaEvalError(f"unknown {task} parameter(s): {', '.join(sorted(unknown))}")
    values = dict(values)
    if isinstance(values.get("lengths"), str):
        values["lengths"] = tuple(parse_lengths(values["lengths"]))
    elif values.get("lengths") is not None:
        values["lengths"] = tuple(sorted({int(v) for v in values["lengths"]}))
    return values


def require_choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    """``--option`` must be one of ``choices`` (YAML presets can carry anything)."""
    if value not in choices:
        raise CocaEvalError(f"{option} must be one of {', '.join(choices)}")


def require_positive_int(option: str, value: Any, allow_none: bool = False) -> None:
    """``--option`` must be a positive integer (YAML presets can carry anything)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CocaEvalError(f"{option} must be a positive integer (got {value!r})")


class SampledCells:
    """Shared by the parameters of the generation tasks (passkey, RULER), whose ``samples`` is a count
    or ``auto`` with a ``max_samples`` cap."""

    @property
    def drawn_samples(self) -> int:
        """How many samples a cell's design holds: ``--samples``, or ``--max-samples`` under ``auto``
        (a cell that stops early has spent a prefix of them in their visiting order)."""
        return self.max_samples if self.samples == "auto" else self.samples

    def check_fixed_count(self, rule_options: tuple[str, ...]) -> None:
        """``--samples N``: a positive count, with none of ``rule_options`` (the fields of ``auto``'s
        stopping rule) given, since a fixed count would silently ignore them."""
        require_positive_int("--samples", self.samples)
        given = [f"--{k.replace('_', '-')}" for k in rule_options if getattr(self, k) is not None]
        if given:
            raise CocaEvalError(f"{', '.join(given)} only apply with --samples auto")


PROMPT_BOS_CHOICES = ("auto", "always", "never")  # BOS in front of a generation prompt (passkey, RULER)
CHAT_KEYWORDS = ("auto", "none")


def check_chat_template(option: str) -> None:
    """``--chat-template``: ``auto``, ``none`` or a file that parses as Jinja, refused before any model
    loads; what it renders is checked once a tokenizer is loaded (:func:`coca_eval.chat.chat_frame`)."""
    if option in CHAT_KEYWORDS:
        return
    import jinja2

    path = Path(option).expanduser()
    try:
        jinja2.Environment().parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CocaEvalError(f"--chat-template {option}: no such file (auto, none or a Jinja file)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CocaEvalError(f"--chat-template {option}: cannot read it ({type(exc).__name__})") from None
    except jinja2.TemplateSyntaxError as exc:
        raise CocaEvalError(
            f"--chat-template {option} is not a Jinja template: {exc.message} (line {exc.lineno})"
        ) from None
