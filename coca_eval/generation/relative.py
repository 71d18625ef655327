"""Effective length at a bar relative to the model itself, for families whose scores have no common
absolute threshold (HELMET's categories, BABILong's task average).

RULER's bar is a fixed score (85.6). HELMET mixes exact match with NDCG, and BABILong's own reading is
"85 % of the 0k score": both read a length as effective while the one-sided 95 % lower bound of a group
of tasks' average reaches ``share`` % of that average at the run's shortest length (RULER's reading,
:mod:`coca_eval.generation.effective`, at that bar). A family names its groups: HELMET one per category,
BABILong one over all its tasks.

**A zero bar.** A bar is a share of something the model has shown it can do at the shortest length.
When the shortest length's one-sided 95 % lower bound (the bound every length is read by) is 0, which
is always so at an average of 0 and, under ``--samples auto``, also at a small average whose interval
still reaches 0, the samples do not show the model above 0 there, and a bar of 0 would read every
length as effective: a model that answers nothing would get the longest length run. Such a reading
has no bar and its effective length is *undefined*, with the reason (``no bar: 0 at 1k``), never a
length; tables print ``undefined (...)`` and the run's config keeps the reason under ``undefined``.

The run records ``share`` and each method's reading in ``config.effective_length``; the gate holds a
candidate at the *baseline's* bar, since a candidate worse at every length would lower its own bar and
could keep its length, which is the regression the gate is for. A baseline without a bar holds the
candidate to nothing: its check passes and says why (there is no length to fall from).
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
    bar: float | None  # share x the average at the shortest length (None: that length failed, or no bar)
    effective: int | None
    undefined: str | None = None  # why the shortest length gives no bar ("no bar: 0 at 1k"), or None

    @property
    def effective_text(self) -> str:
        if self.undefined is not None:
            return f"undefined ({self.undefined})"
        return "-" if self.bar is None else effective_text(self.effective, self.scores)

    def record(self) -> dict:
        """What the run's config keeps of it (``undefined`` only where there is no bar)."""
        record = {
            "bar": self.bar,
            "effective": self.effective,
            "average": {str(s.length): s.average for s in self.scores},
            "lower": {str(s.length): s.lower for s in self.scores},
        }
        if self.undefined is not None:
            record["undefined"] = self.undefined
        return record


def no_bar(first: LengthScore) -> str | None:
    """Why the shortest length's score ``first`` is too low to set a bar (see the module doc), or None:
    its one-sided 95 % lower bound is 0, so the samples do not show the model above 0 there."""
    from coca_eval.lengths import format_length

    if first.average is None or first.lower is None or first.lower > 0:
        return None
    shortest = format_length(first.length)
    if first.average <= 0:
        return f"no bar: 0 at {shortest}"
    return f"no bar: {first.average:.1f} at {shortest}, its 95 % lower bound 0"


def read_relative(cells: Sequence[Cell], tasks: Sequence[str], share: float) -> RelativeReading:
    """One method's ``cells`` of ``tasks``, averaged per length, read at ``share`` % of the shortest."""
    scores = length_scores([c for c in cells if c.dataset in tasks], list(tasks))
    if not scores or scores[0].average is None:
        return RelativeReading(scores, None, None)
    undefined = no_bar(scores[0])
    if undefined is not None:
        return RelativeReading(scores, None, None, undefined)
    bar = share / 100 * scores[0].average
    return RelativeReading(scores, bar, effective_length(scores, bar, bound=True))


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
    baseline's bar must not be shorter than the baseline's. A baseline without a bar (see the module
    doc) has no effective length to fall from: its check passes and its reason says so."""
    from coca_eval.gate.protocol import pair_methods
    from coca_eval.gate.runs import RunCheck
    from coca_eval.lengths import format_length

    checks = []
    for label_b, label_c in pair_methods(base, cand):
        mine_b = [c for c in base.cells if c.task == family and c.method == label_b]
        mine_c = [c for c in cand.cells if c.task == family and c.method == label_c]
        for group, tasks in groups(mine_b):
            reading = read_relative(mine_b, tasks, share)
            what = f"{group} effective length" if group else "effective length"
            method = label_b if label_b == label_c else f"{label_b} -> {label_c}"
            if reading.undefined is not None:
                checks.append(
                    undefined_check(family, what, method, reading, read_relative(mine_c, tasks, share))
                )
                continue
            if reading.bar is None:
                continue  # the baseline failed at its shortest length: no bar to hold the candidate to
            scores_c = length_scores([c for c in mine_c if c.dataset in tasks], tasks)
            length_c = effective_length(scores_c, reading.bar, bound=True)
            text_b, text_c = reading.effective_text, effective_text(length_c, scores_c)
            fell = (length_c or 0) < (reading.effective or 0)
            shortest = format_length(reading.scores[0].length)
            checks.append(
                RunCheck(
                    task=family,
                    name=f"{what} (95 % bound, bar {reading.bar:.1f} = {share:g} % of the baseline at "
                    f"{shortest})",
                    method=method,
                    baseline=text_b,
                    candidate=text_c,
                    failed=fell,
                    reason=f"fell from {text_b} to {text_c}" if fell else "",
                )
            )
    return checks


def undefined_check(family: str, what: str, method: str, base: RelativeReading, cand: RelativeReading):
    """The check of a baseline without a bar: it passes, since an undefined effective length cannot be
    regressed from, and names the baseline's reason; the candidate shows its own reading."""
    from coca_eval.gate.runs import RunCheck

    return RunCheck(
        task=family,
        name=f"{what} (95 % bound, no bar in the baseline)",
        method=method,
        baseline=base.effective_text,
        candidate=cand.effective_text,
        failed=False,
        reason=f"the baseline's effective length is undefined ({base.undefined}): there is no bar to hold "
        "the candidate to, so it cannot regress from it",
    )
