"""Markdown rows from two `coca-eval gate --json` verdicts of one comparison: candidate against
baseline (argv[2]) and the same pair swapped (argv[3]). The gate tests one direction (a rise), so
a fall's p comes from the swapped run. One row per length."""

import json
import sys
from pathlib import Path

forward = json.loads(Path(sys.argv[2]).read_text())["cells"]
swapped = {c["length"]: c for c in json.loads(Path(sys.argv[3]).read_text())["cells"]}
for cell in forward:
    low, high = cell["interval"]
    base, cand = cell["baseline"]["value"], cell["candidate"]["value"]
    p = cell["p_adjusted"] if cand >= base else swapped[cell["length"]]["p_adjusted"]
    print(
        f"| {sys.argv[1]} | {cell['method']} → {cell['candidate_method']} | {cell['length']} | {base:.2f} "
        f"| {cand:.2f} | {cell['effect']:+.1%} | [{low:+.1%}, {high:+.1%}] | {p:.3g} |"
    )
