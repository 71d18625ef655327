"""``gate --from-position``: compare the loss past the trained length instead of the whole cell.

Position-scheme work is judged by what happens beyond the length a model was trained on; a whole-window
perplexity dilutes that with the (many) tokens inside it. Each run pair is restricted, by its task's
hook, to the positions at or past the start, and then gated exactly as usual (paired over documents).
"""

from __future__ import annotations

from collections.abc import Sequence

from coca_eval.errors import CocaEvalError
from coca_eval.lengths import parse_length
from coca_eval.results import Run
from coca_eval.taskspec import spec_for

TRAINED = "trained"


def parse_from_position(text: str | None) -> int | str | None:
    """``trained`` (each baseline method's trained context) or a position such as ``2048`` or ``2k``."""
    if text is None or text.strip().lower() == TRAINED:
        return None if text is None else TRAINED
    try:
        return parse_length(text)
    except (ValueError, CocaEvalError):
        raise CocaEvalError(
            f"--from-position takes 'trained' or a position such as 2048 or 2k (got {text!r})"
        ) from None


def past_position_pairs(pairs: Sequence[tuple[Run, Run]], start: int | str) -> list[tuple[Run, Run]]:
    """Every run pair restricted to the positions ``>= start`` (``trained``: the trained context)."""
    restricted = []
    for base, cand in pairs:
        task = base.config.get("task")
        hooks = spec_for(task).gate if task else None
        if hooks is None or hooks.positions is None:
            raise CocaEvalError(f"--from-position: {task} runs keep no loss by position (ppl runs do)")
        restricted.append(hooks.positions(base, cand, None if start == TRAINED else start))
    return restricted
