"""``coca-eval merge``: one run from the results files of its ``--shard K/N`` jobs."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--output", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The merged run."
)
@click.option("--force", is_flag=True, help="Overwrite an --output that holds another run.")
def merge(shards: tuple[Path, ...], output: Path, force: bool) -> None:
    """Form every cell of a run from the parts its --shard K/N jobs computed, exactly as one unsplit
    run forms them; the output is a normal results file for `report` and `gate`.

    \b
    coca-eval merge runs/ppl.shard-*.json --output runs/ppl.json
    """
    from coca_eval.cli.output import print_length_table
    from coca_eval.distributed.merge import merge_shard_files
    from coca_eval.results import check_overwrite, save_run

    run = merge_shard_files(shards)
    check_overwrite(output, run.config["task"], run.config.get("params"), force, split={})
    save_run(run, output)
    heading = f"[bold]{run.config['task']}[/bold]: {len(shards)} shard files merged"
    print_length_table(run, heading, 3, output)
