"""``coca-eval export``: a results file sent to an experiment tracker (W&B, Trackio) or to a Hub dataset
repository in lm-eval's layout. Registered lazily in :mod:`coca_eval.cli.builtin`; each tracker's
library is an optional extra, and a missing one is one line naming it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click
from rich.console import Console

RUN_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
PROJECT = click.option("--project", default="coca-eval", show_default=True, help="The tracker's project.")
NAME = click.option("--name", default=None, help="The tracker run's name (default: the results file's name).")


@click.group(name="export")
def export_group() -> None:
    """Send a results file where researchers already look: W&B, Trackio, the Hugging Face Hub."""


@export_group.command(name="wandb")
@click.argument("run_file", type=RUN_FILE)
@PROJECT
@NAME
@click.option("--entity", default=None, help="The W&B team or user (default: yours).")
@click.option(
    "--offline",
    is_flag=True,
    help="Write the run locally only (W&B's offline mode; `wandb sync` sends it later).",
)
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where W&B writes its run folder (DIR/wandb; default: here).")  # fmt: skip
def wandb_command(
    run_file: Path, project: str, name: str | None, entity: str | None, offline: bool, directory: Path | None
) -> None:
    """A W&B run: a table per task (methods by length), every cell with its interval, every sample's
    record, the report's plots as images, the protocol and provenance as the run's config.

    \b
    coca-eval export wandb runs/ruler.json --project long-context --offline --dir wandb-runs/
    """
    from coca_eval.errors import CocaEvalError
    from coca_eval.exports.run_tables import read_export
    from coca_eval.exports.trackers import check_wandb, import_tracker, keep_wandb_under, log_run

    export = read_export(run_file)
    tracker = import_tracker("wandb", "export wandb")
    if directory is not None:
        keep_wandb_under(directory)
    options = {"entity": entity, "dir": directory, "mode": "offline" if offline else None}
    try:
        logged = log_run(tracker, export, project, name or export.name, **options)
    except CocaEvalError as error:  # W&B's own words for a missing key name no remedy this command has
        if offline or "api key" not in str(error).lower():
            raise
        raise CocaEvalError(
            f"{error} (log in with `wandb login` or WANDB_API_KEY, or pass --offline to write the run "
            "locally and `wandb sync` it later)"
        ) from None
    check_wandb(logged)
    where = "offline, `wandb sync` sends it" if offline else "sent"
    _said(f"W&B run {name or export.name!r} in project {project!r} ({where}): {logged.location}", logged)


@export_group.command(name="trackio")
@click.argument("run_file", type=RUN_FILE)
@PROJECT
@NAME
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where Trackio keeps its projects (default: TRACKIO_DIR, else the HF cache).")  # fmt: skip
def trackio_command(run_file: Path, project: str, name: str | None, directory: Path | None) -> None:
    """A Trackio run (local first: a SQLite project file that `trackio show` opens), holding what
    `export wandb` sends.

    \b
    coca-eval export trackio runs/ruler.json --project long-context --dir trackio/
    """
    from coca_eval.exports.run_tables import read_export
    from coca_eval.exports.trackers import check_trackio, import_tracker, log_run, trackio_dir

    export = read_export(run_file)
    where = trackio_dir(directory)  # before Trackio is imported: it reads the folder once
    tracker = import_tracker("trackio", "export trackio")
    quiet = {"embed": False, "auto_log_cpu": False, "auto_log_gpu": False}
    logged = log_run(tracker, export, project, name or export.name, **quiet)
    check_trackio(logged, project, name or export.name, where)
    _said(f"Trackio run {name or export.name!r} in project {project!r} under {where}", logged)
    Console().print(f"view it: TRACKIO_DIR={where} trackio show --project {project!r}", soft_wrap=True)


@export_group.command(name="hub")
@click.argument("run_file", type=RUN_FILE)
@click.option("--repo-id", required=True, help="The dataset repository, OWNER/NAME (created if missing).")
@click.option("--private/--public", default=True, show_default=True, help="A new repository's visibility.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also keep the repository's files here (default: a temporary folder).")  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Write the files (to --out) and upload nothing.")
@click.option(
    "--token",
    default=None,
    envvar="HF_TOKEN",
    help="A Hub token with write access (default: HF_TOKEN or your login).",
)
def hub_command(
    run_file: Path, repo_id: str, private: bool, out: Path | None, dry_run: bool, token: str | None
) -> None:
    """The results and every sample's record as a Hub dataset repository in the layout lm-eval's Hub
    logging writes (a folder per method: results_DATE.json, samples_TASK_DATE.jsonl; a dataset card
    whose configs the Hub's viewer reads).

    \b
    coca-eval export hub runs/ruler.json --repo-id me/ruler-results --out hub-files/
    """
    from coca_eval.errors import CocaEvalError
    from coca_eval.exports.hub_layout import push_layout, write_layout
    from coca_eval.exports.run_tables import read_export

    if dry_run and out is None:
        raise CocaEvalError("--dry-run writes the files to --out: name a folder")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise CocaEvalError(f"--repo-id {repo_id!r}: give OWNER/NAME")
    export = read_export(run_file)
    with tempfile.TemporaryDirectory() as scratch:
        folder = out if out is not None else Path(scratch)
        files = write_layout(export, folder)
        console = Console()
        console.print(f"{len(files)} files for {repo_id}" + (f" in {out}" if out else ""), soft_wrap=True)
        if dry_run:
            return
        url = push_layout(folder, repo_id, private, token)
    console.print(f"uploaded: {url}", soft_wrap=True)


def _said(line: str, logged) -> None:
    console = Console()
    console.print(line, soft_wrap=True)
    console.print(f"{len(logged.tables)} tables, {len(logged.plots)} plots", soft_wrap=True)
