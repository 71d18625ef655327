"""``coca-eval import``: other harnesses' outputs as ordinary results files, for ``gate`` and
``report`` beside this project's runs. Registered lazily in :mod:`coca_eval.cli.builtin`."""

from __future__ import annotations

from pathlib import Path

import click

OUTPUT_OPTION = click.option(
    "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The results file."
)
FORCE_OPTION = click.option("--force", is_flag=True, help="Overwrite an --output that holds another run.")


def import_command(name: str, source, *own):
    """A subcommand of ``import`` reading ``source`` (the argument naming the other harness's outputs)
    into ``--output``: the subcommand's ``own`` options stand between ``--output`` and ``--force``, so
    every subcommand's help reads in the same order."""
    from coca_eval.cli.options import with_options

    return lambda command: import_group.command(name=name)(
        with_options(command, [source, OUTPUT_OPTION, *own, FORCE_OPTION])
    )


def outputs_argument(name: str, **kind):
    """One or more existing paths: folders (``file_okay=False``) or files (``dir_okay=False``)."""
    return click.argument(name, nargs=-1, required=True, type=click.Path(exists=True, path_type=Path, **kind))


@click.group(name="import")
def import_group() -> None:
    """Read another harness's outputs into a results file (schema coca-eval/3, per-sample records,
    provenance naming the source)."""


@import_command(
    "lm-eval",
    click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path)),
    click.option("--method", default=None, help="The method's label (default: lm-eval's model name)."),
    click.option(
        "--tasks", default=None, help="Only these of the folder's tasks, comma-separated (default: all)."
    ),
)
def lm_eval(folder: Path, output: Path, method: str | None, tasks: str | None, force: bool) -> None:
    """An lm-evaluation-harness --output_path folder written with --log_samples: its RULER tasks become
    `ruler` cells per task and length, every per-sample score lm-eval's own and checked against RULER's
    scoring, every aggregate checked against its samples; its perplexity tasks (`lm-eval-perplexity`)
    and other tasks (`lm-eval`) keep lm-eval's task and metric names, every value and aggregate checked.

    \b
    coca-eval import lm-eval lmeval-out/ --output runs/lmeval-ruler.json
    coca-eval import lm-eval lmeval-ppl/ --tasks wikitext --output runs/lmeval-wikitext.json
    """
    from coca_eval.imported.evaluation_harness import import_harness_dir

    chosen = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    run = import_harness_dir(folder, method, chosen)
    source = run.config["source"]
    if run.config["task"] != "ruler":
        _save(run, output, force)
        _print_metrics(run, output, f"lm-eval {source['version']} ({source['results']})")
        return
    _save_and_show(
        run, output, force, f"[bold]RULER[/bold] from lm-eval {source['version']} ({source['results']})"
    )


@import_command(
    "ruler",
    outputs_argument("folders", file_okay=False),
    click.option("--method", default="RULER", show_default=True, help="The method's label."),
)
def ruler(folders: tuple[Path, ...], output: Path, method: str, force: bool) -> None:
    """RULER's prediction folders (<N>/pred: a <task>.jsonl per task and the summary.csv of RULER's
    eval/evaluate.py), one per length: each task becomes a `ruler` cell per length, every answer scored
    with this project's RULER scoring and each task's mean held to the score RULER's summary gives.

    \b
    coca-eval import ruler out/synthetic/4096/pred out/synthetic/8192/pred --output runs/ruler.json
    """
    from coca_eval.imported.ruler_predictions import import_ruler_predictions

    run = import_ruler_predictions(list(folders), method)
    _save_and_show(
        run, output, force, f"[bold]RULER[/bold] from RULER's predictions ({run.config['source']['results']})"
    )


@import_command(
    "helmet",
    outputs_argument("files", dir_okay=False),
    click.option("--method", default=None, help="The method's label (default: HELMET's model name)."),
)
def helmet(files: tuple[Path, ...], output: Path, method: str | None, force: bool) -> None:
    """HELMET's eval.py output files (one .json per dataset and length): each becomes a `helmet` cell
    under --protocol helmet, every per-sample metric HELMET's own and checked against HELMET's scoring
    as this project computes it, every average against its samples.

    \b
    coca-eval import helmet helmet-out/json_kv_*.json helmet-out/kilt_nq_*.json --output runs/helmet.json
    """
    from coca_eval.imported.helmet_outputs import import_helmet_outputs

    run = import_helmet_outputs(list(files), method)
    _save_and_show(
        run, output, force, f"[bold]HELMET[/bold] from {len(files)} HELMET output files, protocol helmet"
    )


def _save(run, output: Path, force: bool) -> None:
    """The imported run written to ``output``, which may hold another run only with ``--force``."""
    from coca_eval.results import check_overwrite
    from coca_eval.taskspec import save_run_in_points

    check_overwrite(output, run.config["task"], run.config.get("params"), force, split={})
    save_run_in_points(run, output)


def _save_and_show(run, output: Path, force: bool, heading: str) -> None:
    """The imported run saved, then printed under ``heading`` with the tables of its task's spec (a
    registry look-up: RULER's, HELMET's)."""
    from coca_eval.cli.generation import print_console

    _save(run, output, force)
    print_console(run.config["task"], run, output, heading=heading)


def _print_metrics(run, output: Path, heading: str) -> None:
    """Imported cells that keep lm-eval's names: a row per task, a column per metric."""
    import pandas as pd

    from coca_eval.cli.output import stderr, stdout
    from coca_eval.tables import rich_table

    frame = pd.DataFrame([{"task": c.dataset, "metric": c.metric, "value": c.value} for c in run.cells])
    table = frame.pivot(index="task", columns="metric", values="value").map(lambda v: f"{v:.4g}")
    stdout().print(rich_table(table, title=f"[bold]{heading}[/bold]"))
    stderr().print(f"results written to {output}")
