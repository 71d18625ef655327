"""The gate's run-level check for HELMET: per paired method and category, the candidate's effective
length must not be shorter than the baseline's, both read at the baseline's bar.

The bar is the baseline's (``--share`` of its category average at its shortest length), not each
run's own: a candidate that got worse at every length would lower its own bar and could keep its
effective length, which is exactly the regression the gate is for.
"""

from __future__ import annotations

from coca_eval.gate.options import GateOptions
from coca_eval.gate.protocol import pair_methods
from coca_eval.gate.runs import RunCheck
from coca_eval.results import Run


def effective_length_checks(base: Run, cand: Run, options: GateOptions) -> list[RunCheck]:
    from coca_eval.helmet.report import categories_of, helmet_cells, read_category, run_share, task_order
    from coca_eval.helmet.tasks import category_of
    from coca_eval.lengths import format_length
    from coca_eval.ruler.effective import effective_length, effective_text, length_scores

    share = run_share([base])
    checks = []
    for label_b, label_c in pair_methods(base, cand):
        mine_b = [c for c in helmet_cells(base.cells) if c.method == label_b]
        mine_c = [c for c in helmet_cells(cand.cells) if c.method == label_c]
        for category in categories_of(mine_b):
            reading = read_category(mine_b, category, share)
            if reading.bar is None:
                continue  # the baseline failed at its shortest length: no bar to hold the candidate to
            tasks = [t for t in task_order(mine_b) if category_of(t) == category]
            scores_c = length_scores([c for c in mine_c if c.dataset in tasks], tasks)
            length_c = effective_length(scores_c, reading.bar, bound=True)
            text_b, text_c = reading.effective_text, effective_text(length_c, scores_c)
            fell = (length_c or 0) < (reading.effective or 0)
            shortest = format_length(reading.scores[0].length)
            checks.append(
                RunCheck(
                    task="helmet",
                    name=f"{category} effective length (95 % bound, bar {reading.bar:.1f} = {share:g} % of "
                    f"the baseline at {shortest})",
                    method=label_b if label_b == label_c else f"{label_b} -> {label_c}",
                    baseline=text_b,
                    candidate=text_c,
                    failed=fell,
                    reason=f"fell from {text_b} to {text_c}" if fell else "",
                )
            )
    return checks
