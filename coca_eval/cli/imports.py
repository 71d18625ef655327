"""``coca-eval import``: other harnesses' outputs as ordinary results files, for ``gate`` and
``report`` beside this project's runs. Registered lazily in :mod:`coca_eval.cli.builtin`."""

from __future__ import annotations

from pathlib import Path

import click

OUTPUT_OPTION = click.option(
    "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The results file."
)
FORCE_OPTION = click.option("--force", is_flag=True, help="Overwrite an --output that holds another run.")


@click.group(name="import")
def import_group() -> None:
    """Read another harness's outputs into a results file (schema coca-eval/3, per-sample records,
    provenance naming the source)."""


@import_group.command(name="lm-eval")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@OUTPUT_OPTION
@click.option("--method", default=None, help="The method's label (default: lm-eval's model name).")
@click.option(
    "--tasks", default=None, help="Only these of the folder's tasks, comma-separated (default: all)."
)
@FORCE_OPTION
def lm_eval(folder: Path, output: Path, method: str | None, tasks: str | None, force: bool) -> None:
    """An lm-evaluation-harness --output_path folder written with --log_samples: its RULER tasks become
    `ruler` cells per task and length, every per-sample score lm-eval's own and checked against RULER's
    scoring, every aggregate checked against its samples; its perplexity tasks (`lm-eval-perplexity`)
    and other tasks (`lm-eval`) keep lm-eval's task and metric names, every value and aggregate checked.

    \b
    coca-eval import lm-eval lmeval-out/ --output runs/lmeval-ruler.json
    coca-eval import lm-eval lmeval-ppl/ --tasks wikitext --output runs/lmeval-wikitext.json
    """
    from coca_eval.cli.generation import print_console
    from coca_eval.imported.evaluation_harness import import_harness_dir

    chosen = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    run = import_harness_dir(folder, method, chosen)
    _save(run, output, force)
    source = run.config["source"]
    if run.config["task"] != "ruler":
        _print_metrics(run, output, f"lm-eval {source['version']} ({source['results']})")
        return
    heading = f"[bold]RULER[/bold] from lm-eval {source['version']} ({source['results']})"
    print_console("ruler", run, output, heading=heading)  # registry look-up of RULER's tables


@import_group.command(name="ruler")
@click.argument(
    "folders", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@OUTPUT_OPTION
@click.option("--method", default="RULER", show_default=True, help="The method's label.")
@FORCE_OPTION
def ruler(folders: tuple[Path, ...], output: Path, method: str, force: bool) -> None:
    """RULER's prediction folders (<N>/pred: a <task>.jsonl per task and the summary.csv of RULER's
    eval/evaluate.py), one per length: each task becomes a `ruler` cell per length, every answer scored
    with this project's RULER scoring and each task's mean held to the score RULER's summary gives.

    \b
    coca-eval import ruler out/synthetic/4096/pred out/synthetic/8192/pred --output runs/ruler.json
    """
    from coca_eval.cli.generation import print_console
    from coca_eval.imported.ruler_predictions import import_ruler_predictions

    run = import_ruler_predictions(list(folders), method)
    _save(run, output, force)
    heading = f"[bold]RULER[/bold] from RULER's predictions ({run.config['source']['results']})"
    print_console("ruler", run, output, heading=heading)  # registry look-up of RULER's tables


@import_group.command(name="helmet")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@OUTPUT_OPTION
@click.option("--method", default=None, help="The method's label (default: HELMET's model name).")
@FORCE_OPTION
def helmet(files: tuple[Path, ...], output: Path, method: str | None, force: bool) -> None:
    """HELMET's eval.py output files (one .json per dataset and length): each becomes a `helmet` cell
    under --protocol helmet, every per-sample metric HELMET's own and checked against HELMET's scoring
    as this project computes it, every average against its samples.

    \b
    coca-eval import helmet helmet-out/json_kv_*.json helmet-out/kilt_nq_*.json --output runs/helmet.json
    """
    from coca_eval.cli.generation import print_console
    from coca_eval.imported.helmet_outputs import import_helmet_outputs

    run = import_helmet_outputs(list(files), method)
    _save(run, output, force)
    heading = f"[bold]HELMET[/bold] from {len(files)} HELMET output files, protocol helmet"
    print_console("helmet", run, output, heading=heading)  # registry look-up of HELMET's tables


def _save(run, output: Path, force: bool) -> None:
    """The imported run written to ``output``, which may hold another run only with ``--force``."""
    from coca_eval.results import check_overwrite
    from coca_eval.taskspec import save_run_in_points

    check_overwrite(output, run.config["task"], run.config.get("params"), force, split={})
    save_run_in_points(run, output)


def _print_metrics(run, output: Path, heading: str) -> None:
    """Imported cells that keep lm-eval's names: a row per task, a column per metric."""
    import pandas as pd

    from coca_eval.cli.output import stderr, stdout
    from coca_eval.tables import rich_table

    frame = pd.DataFrame([{"task": c.dataset, "metric": c.metric, "value": c.value} for c in run.cells])
    table = frame.pivot(index="task", columns="metric", values="value").map(lambda v: f"{v:.4g}")
    stdout().print(rich_table(table, title=f"[bold]{heading}[/bold]"))
    stderr().print(f"results written to {output}")
