"""The gate for RULER: the base's paired test per task cell (:mod:`coca_eval.generation.gate`), and a
run-level check that the effective length (ours, from the 95 % lower bound) did not fall."""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import pair_methods
from coca_eval.gate.runs import RunCheck
from coca_eval.results import Run


def effective_length_checks(base: Run, cand: Run, options: GateOptions) -> list[RunCheck]:
    """Per paired method: the candidate's effective length (95 % bound) must not be shorter than the
    baseline's. Both are read at the baseline's threshold, over the baseline's tasks."""
    from coca_eval.generation.effective import effective_length, effective_text, length_scores
    from coca_eval.ruler.params import RULER_THRESHOLD

    threshold = (base.config.get("effective_length") or {}).get("threshold", RULER_THRESHOLD)
    # The baseline's tasks. Equivalent to each run's own (``None``) whenever the gate gets here: the
    # protocol check wants equal task lists and the cell pairing equal cells (a candidate lacking a
    # task's cells is refused, tested), and the average and its bounds do not depend on the tasks' order.
    tasks = (base.config.get("params") or {}).get("tasks") or None
    checks = []
    for label_b, label_c in pair_methods(base, cand):
        scores_b = length_scores([c for c in base.cells if c.method == label_b], tasks)
        scores_c = length_scores([c for c in cand.cells if c.method == label_c], tasks)
        length_b = effective_length(scores_b, threshold, bound=True)
        length_c = effective_length(scores_c, threshold, bound=True)
        text_b, text_c = effective_text(length_b, scores_b), effective_text(length_c, scores_c)
        fell = (length_c or 0) < (length_b or 0)
        reason = f"fell from {text_b} to {text_c}" if fell else ""
        checks.append(
            RunCheck(
                task="ruler",
                name=f"effective length (95 % bound, threshold {threshold:g})",
                method=label_b if label_b == label_c else f"{label_b} -> {label_c}",
                baseline=text_b,
                candidate=text_c,
                failed=fell,
                reason=reason,
            )
        )
    return checks


def samples_mismatch(units_b: dict, units_c: dict, where: str) -> str:
    """What differs between two cells' samples (``report.unit_ids``: references and prompt hash),
    concretely: other indices, or how many samples hold other references or, with the same references,
    other prompts, with the first as an example (two harnesses draw their own needles)."""
    head = f"RULER samples (their references) differ at {where}"
    if set(units_b) != set(units_c):
        only_b, only_c = sorted(set(units_b) - set(units_c)), sorted(set(units_c) - set(units_b))
        return f"{head}: indices only in the baseline {only_b[:5]}, only in the candidate {only_c[:5]}"
    other = [i for i in sorted(units_b) if units_b[i][0] != units_c[i][0]]
    if other:
        first = other[0]
        return (
            f"{head}: {len(other)} of {len(units_b)} hold other references (sample {first}: "
            f"{list(units_b[first][0])} vs {list(units_c[first][0])}); not the same samples"
        )
    other = [i for i in sorted(units_b) if units_b[i] != units_c[i]]
    first, prompts = other[0], (units_b[other[0]][1], units_c[other[0]][1])
    return (
        f"{head}: {len(other)} of {len(units_b)} hold the same references but other prompts (sample "
        f"{first}: prompt sha256 {_short(prompts[0])} vs {_short(prompts[1])}); not the same samples"
    )


def _short(digest: str | None) -> str:
    return "not recorded" if digest is None else digest[:12]
