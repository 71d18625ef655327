"""How many samples a finished fixed-count run's decisions would have needed under ``--samples auto``.

Every cell's samples are replayed in the visiting order a sequential run of the same design uses
(:func:`~coca_eval.sequential.visiting_order`: same seed, same length, ``--max-samples`` = the run's
``--samples``), through the stopping rules. A sequential run with those options draws the very same
samples (same keys and depths) and greedy decoding answers them the same way, so the table is what it
would have spent, not an estimate.

    python -m coca_eval.sequential_replay RUN... [--threshold 0.5] [--target-width 0.2] \
        [--regenerate CMD] > table.md

``--regenerate`` is the command the table's caption cites for making it again (a script that runs
this one on its committed runs); by default, this command with the options given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.results import Cell
from coca_eval.sequential import SequentialOutcome, StoppingRule, stop_point, visiting_order
from coca_eval.taskspec import load_checked_run


@dataclass(frozen=True)
class ReplayRow:
    run: str
    cell: Cell
    spent: int  # samples of the fixed run
    threshold: SequentialOutcome
    width: SequentialOutcome


def ordered_scores(cell: Cell, seed: int) -> list[float]:
    """The cell's per-sample scores in its visiting order (passkey: correct as 0/1; a task whose
    samples carry a fractional ``score`` gives that)."""
    samples = {s["index"]: s for s in cell.detail["samples"]}
    if sorted(samples) != list(range(len(samples))):
        raise ValueError(f"{cell.method} @ {cell.length}: samples are not 0..{len(samples) - 1}")
    order = visiting_order(cell.task, seed, cell.length, len(samples))
    return [float(samples[i]["score"] if "score" in samples[i] else samples[i]["correct"]) for i in order]


def replay_run(path: Path, threshold: float, width: float) -> list[ReplayRow]:
    """Every ok cell of one fixed-count run through both rules, with ``--max-samples`` its sample count."""
    run = load_checked_run(path)
    seed = (run.config.get("params") or {}).get("seed", 0)
    rows = []
    for cell in run.cells:
        if cell.status != "ok" or not cell.detail.get("samples"):
            continue
        by_threshold = replay_cell(cell, seed, threshold=threshold)
        by_width = replay_cell(cell, seed, target_width=width)
        rows.append(ReplayRow(path.name, cell, cell.n, by_threshold, by_width))
    return rows


def replay_cell(cell: Cell, seed: int, **rule: float) -> SequentialOutcome:
    """Where ``--samples auto --max-samples <the cell's samples>`` with ``rule`` would have stopped."""
    scores = ordered_scores(cell, seed)
    return stop_point(scores, StoppingRule(len(scores), **rule))


def fixed_side(row: ReplayRow, threshold: float) -> str:
    """The decision the fixed run's point estimate suggests (no interval behind it)."""
    value = rule_scale(row.cell)
    return "above" if value > threshold else "below" if value < threshold else "at"


def rule_scale(cell: Cell) -> float:
    """The cell's value as the stopping rule reads scores, 0-1 (its ``--threshold`` and
    ``--target-width`` too): the cell's points / 100."""
    return cell.value / 100


def markdown_table(rows: Sequence[ReplayRow], threshold: float, width: float) -> str:
    """The replay as Markdown: one line per cell, then the totals."""
    lines = [
        f"| run | method | length | accuracy | vs {threshold:g} | samples | interval at the stop | "
        f"width < {width:g}: samples |",
        "|---|---|---:|---:|---|---:|---|---:|",
    ]
    for row in rows:
        low, high = row.threshold.interval
        reached = row.width.decision.startswith("narrower")
        lines.append(
            f"| {row.run} | {row.cell.method} | {row.cell.length} | {rule_scale(row.cell):.2f} | "
            f"{row.threshold.decision} | {row.threshold.spent} / {row.spent} | [{low:.3f}, {high:.3f}] | "
            f"{row.width.spent if reached else 'not reached'} / {row.spent} |"
        )
    fixed = sum(r.spent for r in rows)
    decided = [r for r in rows if not r.threshold.decision.startswith("undecided")]
    agree = sum(r.threshold.decision.startswith(fixed_side(r, threshold)) for r in decided)
    narrow = [r for r in rows if r.width.decision.startswith("narrower")]
    lines += [
        "",
        f"{len(rows)} cells, {fixed} samples spent by the fixed runs.",
        f"Threshold {threshold:g}: {len(decided)} cells decided within their samples, using "
        f"{sum(r.threshold.spent for r in rows)} samples in all ({_share(rows, 'threshold')} of the fixed "
        f"runs'); {agree} of the {len(decided)} decisions agree with the side of {threshold:g} the fixed "
        f"run's accuracy lies on; {len(rows) - len(decided)} cells stay undecided at their last sample.",
        f"Target width {width:g}: {len(narrow)} cells reach it, using {sum(r.width.spent for r in rows)} "
        f"samples in all ({_share(rows, 'width')} of the fixed runs').",
    ]
    return "\n".join(lines) + "\n"


def _share(rows: Sequence[ReplayRow], rule: str) -> str:
    spent = sum(getattr(r, rule).spent for r in rows)
    return f"{100 * spent / sum(r.spent for r in rows):.0f} %"


def report(paths: Sequence[Path], threshold: float, width: float, regenerate: str | None = None) -> str:
    rows = [row for path in paths for row in replay_run(Path(path), threshold, width)]
    rule = StoppingRule(rows[0].spent if rows else 1, threshold=threshold)
    head = (
        "# Samples the committed passkey decisions would have needed\n\n"
        "Each cell's samples replayed in the visiting order of `--samples auto --max-samples 100` "
        f"(rounds of {rule.round_size}, {rule.confidence * 100:g} % betting confidence sequence), once with "
        f"`--threshold {threshold:g}` and once with `--target-width {width:g}`. Regenerate with "
        f"`{regenerate or _replay_command(threshold, width)}`; `docs/sequential.md` explains the rules.\n\n"
    )
    return head + markdown_table(rows, threshold, width)


def _replay_command(threshold: float, width: float) -> str:
    return f"python -m coca_eval.sequential_replay RUN... --threshold {threshold:g} --target-width {width:g}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--target-width", type=float, default=0.2)
    parser.add_argument("--regenerate", help="The command the caption cites for making the table again.")
    args = parser.parse_args(argv)
    sys.stdout.write(report(args.runs, args.threshold, args.target_width, args.regenerate))


if __name__ == "__main__":
    main()
