"""Effective length at a bar relative to the model itself, for families whose scores have no common
absolute threshold (HELMET's categories, BABILong's task average).

RULER's bar is a fixed score (85.6). HELMET mixes exact match with NDCG, and BABILong's own reading is
"85 % of the 0k score": both read a length as effective while the one-sided 95 % lower bound of a group
of tasks' average reaches ``share`` % of that average at the run's shortest length (RULER's reading,
:mod:`coca_eval.generation.effective`, at that bar). A family names its groups: HELMET one per category,
BABILong one over all its tasks.

The run records ``share`` and each method's reading in ``config.effective_length``; the gate holds a
candidate at the *baseline's* bar, since a candidate worse at every length would lower its own bar and
could keep its length, which is the regression the gate is for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coca_eval.generation.effective import LengthScore, effective_length, effective_text, length_scores
from coca_eval.results import Cell, Run

# one method's cells -> its groups as (label, tasks); a single group labelled "" is the whole family
Groups = Callable[[Sequence[Cell]], list[tuple[str, list[str]]]]


@dataclass(frozen=True)
class RelativeReading:
    """One method's group of tasks: its average and bound per length, the bar, the effective length."""

    scores: list[LengthScore]
    bar: float | None  # share x the average at the shortest length (None: that length failed)
    effective: int | None

    @property
    def effective_text(self) -> str:
        return "-" if self.bar is None else effective_text(self.effective, self.scores)

    def record(self) -> dict:
        """What the run's config keeps of it."""
        return {
            "bar": self.bar,
            "effective": self.effective,
            "average": {str(s.length): s.average for s in self.scores},
            "lower": {str(s.length): s.lower for s in self.scores},
        }


def read_relative(cells: Sequence[Cell], tasks: Sequence[str], share: float) -> RelativeReading:
    """One method's ``cells`` of ``tasks``, averaged per length, read at ``share`` % of the shortest."""
    scores = length_scores([c for c in cells if c.dataset in tasks], list(tasks))
    first = scores[0].average if scores else None
    bar = None if first is None else share / 100 * first
    return RelativeReading(scores, bar, None if bar is None else effective_length(scores, bar, bound=True))


def recorded_share(runs: Sequence[Run], default: float, family: str) -> float:
    """The ``--share`` the runs recorded; runs read at different shares are refused."""
    from coca_eval.errors import CocaEvalError

    shares = {(r.config.get("effective_length") or {}).get("share", default) for r in runs}
    if len(shares) > 1:
        raise CocaEvalError(f"the {family} runs were made with different --share: report them apart")
    return shares.pop() if shares else default


def merged_share(run: Run, default: float) -> float:
    """The share a merged run keeps: the one its shards recorded."""
    recorded = run.config.get("effective_length")
    share = recorded.get("share") if isinstance(recorded, dict) else None
    return default if share is None else share


def record_relative(run: Run, family: str, share: float, groups: Groups) -> None:
    """``config.effective_length``: the share and, per method and group, its reading. A run with a
    partial cell keeps the share alone (its lengths are not all read yet)."""
    mine = [c for c in run.cells if c.task == family]
    cells = [c for c in mine if c.status != "partial"]
    if len(cells) != len(mine):
        run.config["effective_length"] = {"share": share}
        return
    record: dict = {}
    for method in dict.fromkeys(c.method for c in cells):
        own = [c for c in cells if c.method == method]
        readings = {label: read_relative(own, tasks, share).record() for label, tasks in groups(own)}
        record[method] = readings.pop("") if list(readings) == [""] else readings  # one unnamed group: flat
    run.config["effective_length"] = {"share": share, "methods": record}


def relative_length_checks(base: Run, cand: Run, family: str, share: float, groups: Groups) -> list:
    """The gate's run checks: per paired method and group, the candidate's effective length at the
    baseline's bar must not be shorter than the baseline's."""
    from coca_eval.gate.protocol import pair_methods
    from coca_eval.gate.runs import RunCheck
    from coca_eval.lengths import format_length

    checks = []
    for label_b, label_c in pair_methods(base, cand):
        mine_b = [c for c in base.cells if c.task == family and c.method == label_b]
        mine_c = [c for c in cand.cells if c.task == family and c.method == label_c]
        for group, tasks in groups(mine_b):
            reading = read_relative(mine_b, tasks, share)
            if reading.bar is None:
                continue  # the baseline failed at its shortest length: no bar to hold the candidate to
            scores_c = length_scores([c for c in mine_c if c.dataset in tasks], tasks)
            length_c = effective_length(scores_c, reading.bar, bound=True)
            text_b, text_c = reading.effective_text, effective_text(length_c, scores_c)
            fell = (length_c or 0) < (reading.effective or 0)
            shortest = format_length(reading.scores[0].length)
            what = f"{group} effective length" if group else "effective length"
            checks.append(
                RunCheck(
                    task=family,
                    name=f"{what} (95 % bound, bar {reading.bar:.1f} = {share:g} % of the baseline at "
                    f"{shortest})",
                    method=label_b if label_b == label_c else f"{label_b} -> {label_c}",
                    baseline=text_b,
                    candidate=text_c,
                    failed=fell,
                    reason=f"fell from {text_b} to {text_c}" if fell else "",
                )
            )
    return checks
