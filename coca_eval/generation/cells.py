"""A generation cell's pieces that need no model: its value from the samples' records (the spec's
``combine``, so a merged or gathered cell is made by the same code), whether a journaled sample is
scored as its output earns, how a sample goes to a chat API, and whether a length fits the model."""

from __future__ import annotations

from coca_eval.generation.effective import record_trials, score_interval
from coca_eval.results import Cell


def scored_as_its_output(task, part: dict, score) -> bool:
    """A journaled sample's score and found references are what its output earns (by ``score``, the
    family's scorer)."""
    output = part.get("output")
    if not isinstance(output, str):
        return False
    scored = score(task, output, part["answers"], part)
    return all(part.get(name) == value for name, value in scored.items())


def chat_prompt(sample, tokenizer):
    """``sample`` as a chat API takes it: its user message as text (decoded as it is, nothing cleaned
    up) after the conversation's earlier turns if it has them, its answer prefix opening the
    assistant's turn, and its tokens to check the server's rendering against."""
    from coca_eval.chat import ChatPrompt

    if sample.messages:  # a whole conversation: its turns as they are, the last one the user's
        *history, last = sample.messages
        return ChatPrompt(last["content"], sample.answer_prefix, tuple(sample.ids), tuple(history))
    start, end = sample.text_span
    user = tokenizer.decode(
        sample.ids[start:end], skip_special_tokens=False, clean_up_tokenization_spaces=False
    )
    return ChatPrompt(user, sample.answer_prefix, tuple(sample.ids))


def too_long(limit: int | None, length: int, budget: int) -> str | None:
    """Why a ``length``-token prompt and ``budget`` answer tokens past it do not fit the model's
    positions (None if they do); ``budget`` is 0 when N already counts the answer (RULER's N)."""
    if limit is None or length + budget <= limit:
        return None
    if not budget:
        return f"{length} tokens (prompt and answer) exceed the model's {limit} positions"
    return f"{length} + {budget} answer tokens exceed the model's {limit} positions"


def combine_cell(base: dict, records: list[dict], context: dict) -> Cell:
    """The cell from every sample's record (in sample order) and how they were decoded (``context``):
    the spec's ``combine``, so a merged or gathered cell is made by this same code. A cell that stopped
    by a rule (``context["sequential"]``) records its confidence sequence's interval, in points: a
    Wilson interval does not hold at a sample count the scores chose; a fixed cell, Wilson's interval at
    its effective number of samples (n, or fewer where samples share a story:
    :func:`~coca_eval.generation.effective.record_trials`). A run that decoded thoughts
    apart records the share of samples whose thought the think budget closed (``cut_in_thought``)."""
    n = len(records)
    score = 100 * sum(float(r["score"]) for r in records) / n
    full = sum(float(r["score"]) == 1.0 for r in records)
    if "sequential" in context:
        interval = [100 * bound for bound in context["sequential"]["interval"]]
    else:
        interval = list(score_interval(score, record_trials(records)))
    detail = {
        "score": score,
        "interval95": interval,
        "full_credit": full / n,
        "samples": records,
        **context,
    }
    if any("thought_tokens" in r for r in records):  # a thinking run: the share its budget cut
        detail["cut_in_thought"] = sum(bool(r.get("thought_closed_by_budget")) for r in records) / n
    return Cell(**{**base, "unit": "points"}, value=score, n=n, detail=detail)  # said, as a journal keeps it
