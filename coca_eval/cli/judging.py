"""``coca-eval judge-agreement A.json B.json``: how often the judges of two runs agree on the same
answers (see :mod:`coca_eval.judging.agreement`)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command(name="judge-agreement")
@click.argument("first", type=click.Path(path_type=Path))
@click.argument("second", type=click.Path(path_type=Path))
def judge_agreement(first: Path, second: Path) -> None:
    """How often the judges of two runs of the same answers agree: per cell and over all, the share of
    samples with the same verdict, each judge's CORRECT share and Cohen's kappa. Two runs with the same
    --model and another --judge give the same answers (greedy) for two judges to grade."""
    from coca_eval.cli.output import stdout
    from coca_eval.judging.agreement import agreement, judge_names
    from coca_eval.results import load_run

    runs = [load_run(path) for path in (first, second)]
    say = stdout().print
    say(f"judge A: {judge_names(runs[0])}", markup=False, highlight=False, soft_wrap=True)
    say(f"judge B: {judge_names(runs[1])}", markup=False, highlight=False, soft_wrap=True)
    for found in agreement(*runs):
        say(found.line(), markup=False, highlight=False, soft_wrap=True)
