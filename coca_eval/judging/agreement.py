"""How often two judges agree on a run's samples: the same answers (same cell, sample and output),
judged in two runs by two judges, compared verdict by verdict.

Per cell and over all, :func:`agreement` counts the samples both runs judged, those on which the
verdicts agree, each judge's CORRECT share, and Cohen's kappa (agreement beyond what the two CORRECT
shares give by chance; 1 when the judges agree on every sample, undefined when both give one verdict
throughout). A sample whose output differs between the runs was not the same answer, and is left out
and counted, so that two runs of different models are never read as judge agreement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coca_eval.errors import CocaEvalError


@dataclass
class Agreement:
    """Verdict pairs of one cell (or of all): ``pairs`` as (verdict A is CORRECT, B is CORRECT)."""

    where: str
    pairs: list[tuple[bool, bool]] = field(default_factory=list)
    other_outputs: int = 0

    @property
    def n(self) -> int:
        return len(self.pairs)

    @property
    def agreed(self) -> int:
        return sum(a == b for a, b in self.pairs)

    def correct_share(self, side: int) -> float:
        return sum(p[side] for p in self.pairs) / self.n

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa, None where chance agreement is 1 (both judges give one verdict throughout)."""
        observed = self.agreed / self.n
        a, b = self.correct_share(0), self.correct_share(1)
        chance = a * b + (1 - a) * (1 - b)
        return None if chance == 1 else (observed - chance) / (1 - chance)

    def line(self) -> str:
        kappa = "undefined" if self.kappa is None else f"{self.kappa:.3f}"
        left = f", {self.other_outputs} samples with other outputs left out" if self.other_outputs else ""
        return (
            f"{self.where}: {self.agreed}/{self.n} verdicts agree ({100 * self.agreed / self.n:.1f} %), "
            f"CORRECT {100 * self.correct_share(0):.1f} % vs {100 * self.correct_share(1):.1f} %, "
            f"Cohen's kappa {kappa}{left}"
        )


def _judged(run) -> dict[tuple, dict[int, dict]]:
    """The run's judged samples by cell (task, method, dataset, length) and sample index."""
    out: dict[tuple, dict[int, dict]] = {}
    for cell in run.cells:
        samples = [s for s in (cell.detail or {}).get("samples", []) if "verdict" in s]
        if samples:
            out[(cell.task, cell.method, cell.dataset, cell.length)] = {int(s["index"]): s for s in samples}
    return out


def agreement(run_a, run_b) -> list[Agreement]:
    """Each shared cell's agreement, then the whole (``where`` "all")."""
    cells_a, cells_b = _judged(run_a), _judged(run_b)
    if not cells_a or not cells_b:
        raise CocaEvalError("judge agreement needs two runs with judged samples (verdicts in their cells)")
    shared = [key for key in cells_a if key in cells_b]
    if not shared:
        raise CocaEvalError("the two runs share no judged cell (same task, method, dataset and length)")
    found, whole = [], Agreement("all")
    for key in shared:
        task, method, dataset, length = key
        cell = Agreement(f"{method} {dataset or task} @ {length}")
        for index, sample in cells_a[key].items():
            other = cells_b[key].get(index)
            if other is None:
                continue
            if other.get("output") != sample.get("output"):
                cell.other_outputs += 1
                continue
            cell.pairs.append((sample["verdict"] == "CORRECT", other["verdict"] == "CORRECT"))
        if cell.n:
            found.append(cell)
            whole.pairs += cell.pairs
        whole.other_outputs += cell.other_outputs
    if not whole.n:
        raise CocaEvalError("no sample of the two runs holds the same answer: nothing to compare judges on")
    return [*found, whole]


def judge_names(run) -> str:
    """The judge a run records (its identity), for the heading."""
    return str(run.config.get("params", {}).get("judge_id") or "no judge recorded")
