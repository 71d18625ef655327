"""Markdown rows from two `coca-eval gate --json` verdicts of one comparison: candidate against
baseline (argv[2]) and the same pair swapped (argv[3]). The gate tests one direction (a perplexity
rise, an accuracy drop), so a change the other way takes its p from the swapped run. One row per
length: a perplexity change is relative, an accuracy change absolute, in points (candidate minus
baseline)."""

import json
import sys
from pathlib import Path


def change_and_interval(cell: dict) -> tuple[str, str, bool]:
    """The change as printed, its interval, and whether it is in the direction the gate tests."""
    low, high = cell["interval"]
    base, cand = cell["baseline"]["value"], cell["candidate"]["value"]
    if cell["effect_kind"] == "accuracy_drop":  # the gate's effect is baseline minus candidate
        change, low, high = (0.0 - x for x in (cell["effect"], high, low))  # 0.0 - 0.0 is +0.0
        return f"{change:+.2f}", f"[{low:+.2f}, {high:+.2f}]", cand <= base
    return f"{cell['effect']:+.1%}", f"[{low:+.1%}, {high:+.1%}]", cand >= base


forward = json.loads(Path(sys.argv[2]).read_text())["cells"]
swapped = {c["length"]: c for c in json.loads(Path(sys.argv[3]).read_text())["cells"]}
for cell in forward:
    base, cand = cell["baseline"]["value"], cell["candidate"]["value"]
    change, interval, tested = change_and_interval(cell)
    p = cell["p_adjusted"] if tested else swapped[cell["length"]]["p_adjusted"]
    print(
        f"| {sys.argv[1]} | {cell['method']} → {cell['candidate_method']} | {cell['length']} | {base:.2f} "
        f"| {cand:.2f} | {change} | {interval} | {p:.3g} |"
    )
