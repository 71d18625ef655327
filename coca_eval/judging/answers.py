"""Answers kept before they are judged: a judged family's greedy call wrapped so that each answer is
journaled (under its cell's key with ``/answers`` added, by sample index) before the judge sees it, and
a judge failure waits until the whole call has decoded.

Without it a judge that fails on one sample would cost every answer of the batch decoded beside it
(their records are written after their judgement), and a rerun would decode them all again; with it a
rerun decodes nothing it has decoded, and asks the judge only what it has not answered
(:class:`~coca_eval.judging.judges.Judge`). The first failure is raised once every answer of the call
is journaled and every other one judged, so its cell is an error cell naming that sample.
"""

from __future__ import annotations

from coca_eval.judging.judges import JudgeFailed

SUFFIX = "/answers"


def answers_key(cell_key: str) -> str:
    return cell_key + SUFFIX


def judged_call(generate, journal, rows: list):
    """``generate`` (a backend's greedy call over ``rows``: (pending cell, sample index) pairs, in prompt
    order) with its answers journaled first and served from the journal on a rerun."""

    def call(prompts, prefixes, stop, on_done, *args, prefix_groups=None, **kwargs):
        kept = [journal.parts.get(answers_key(cell.key), {}).get(str(i)) for cell, i in rows]
        failures: list[JudgeFailed] = []

        def judged(position: int, tokens: list[int]) -> None:
            try:
                on_done(position, tokens)
            except JudgeFailed as exc:
                failures.append(exc)

        for position, entry in enumerate(kept):
            if entry is not None:
                judged(position, list(entry["tokens"]))
        todo = [p for p, entry in enumerate(kept) if entry is None]

        def decoded(k: int, tokens: list[int]) -> None:
            cell, i = rows[todo[k]]
            journal.record_part(answers_key(cell.key), str(i), {"tokens": list(tokens)})
            judged(todo[k], tokens)

        reused = False
        if todo:
            groups = None if prefix_groups is None else [prefix_groups[p] for p in todo]
            reused = generate(
                [prompts[p] for p in todo], [prefixes[p] for p in todo], stop, decoded, *args,
                prefix_groups=groups, **kwargs,
            )  # fmt: skip
        if failures:
            raise failures[0]
        return reused

    return call
