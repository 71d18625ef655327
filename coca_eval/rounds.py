"""``--samples auto``: a cell computed in rounds until its stopping rule is met, for any task whose units
(samples) score in [0, 1] and are journaled one by one.

The cell's design is a fixed list of ``max_samples`` units, visited in a seeded order
(:func:`~coca_eval.sequential.visiting_order`). Each round computes the next ``round_size`` of them (the
task skips those already journaled, so a resumed cell recomputes nothing) and the rule then reads the
scores of every unit so far, in visiting order. Extending a cell never changes a unit already computed,
and a replay of a finished cell's scores gives the very stop a live run made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coca_eval.sequential import SequentialOutcome, StoppingRule, stop_point


def sample_in_rounds(
    order: Sequence[int],
    rule: StoppingRule,
    compute: Callable[[list[int]], None],
    score: Callable[[int], float],
) -> SequentialOutcome:
    """Compute ``order``'s units round by round (``compute`` journals a round's units) until the rule
    stops on their scores (``score`` reads one unit's); the outcome says how many were spent."""
    if len(order) != rule.max_samples:
        raise ValueError(f"a design of {len(order)} units for a rule of {rule.max_samples} samples")
    start = 0
    for look in rule.looks():
        compute(list(order[start:look]))
        start = look
        outcome = stop_point([score(unit) for unit in order[:look]], rule)
        if outcome is not None:
            return outcome
    raise AssertionError("the rule decides at max_samples, its last look")
