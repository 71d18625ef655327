"""``coca-eval opencompass``: short-context benchmarks through OpenCompass (the paper's Table 5)."""

from __future__ import annotations

from pathlib import Path

import click

from coca_eval.cli.options import method_options
from coca_eval.errors import CocaEvalError


class _RunByDefault(click.Group):
    """``coca-eval opencompass --model ...`` means ``coca-eval opencompass run --model ...``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_RunByDefault)
def opencompass() -> None:
    """Short-context benchmarks through OpenCompass (the paper's Table 5).

    \b
    coca-eval opencompass --model DIR --rope none --datasets table5 --data-root ~/oc-data --output t5.json
    coca-eval opencompass --model DIR --datasets COPA,RTE,MMLU:anatomy --data-root ~/oc-data
    coca-eval opencompass import outputs/default/2026.../summary/summary_2026....csv --output t5.json
    """


def _print_table5(run, output) -> None:
    from coca_eval.cli.output import save_default, stderr, stdout
    from coca_eval.opencompass.report import opencompass_tables
    from coca_eval.report.definition import ReportDefinition
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    for table in opencompass_tables(run.cells, ReportDefinition()):
        stdout().print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
    written = save_default(run, output, "opencompass")
    stderr().print(f"results written to {written}", markup=False, highlight=False, soft_wrap=True)


@opencompass.command("run")
@click.option(
    "--datasets",
    default="table5",
    show_default=True,
    help="table5, or names: COPA,RTE,BoolQ,MMLU:anatomy,...",
)
@click.option(
    "--data-root",
    required=True,
    type=click.Path(path_type=Path),
    help="Directory holding OpenCompass's data/ tree (data/SuperGLUE/COPA/val.jsonl, ...).",
)
@click.option(
    "--work-dir",
    type=click.Path(path_type=Path),
    help="Config, logs and outputs; finished tasks are reused on a rerun with the same methods and "
    "settings (default: OUTPUT.opencompass beside --output, else a new temp dir).",
)
@click.option(
    "--max-seq-len", default=2048, show_default=True, type=int, help="Tokens kept per prompt (its end)."
)
@click.option("--workers", default=1, show_default=True, type=int, help="OpenCompass tasks run at once.")
@method_options(
    output_help="Write the results JSON here (OpenCompass's work directory beside it: rerun the same "
    "command to resume). Default: runs/opencompass-TIMESTAMP.json.",
    batch_help="Prompts per forward pass.",
)
def opencompass_run(
    models, ropes, methods_file, dtype, device, device_map, batch_size, output, force, backend, engine,
    datasets, data_root, work_dir, max_seq_len, workers,
):  # fmt: skip
    """Evaluate methods with OpenCompass and print Table 5 (categories and Total)."""
    from coca_eval.cli.options import build_cli_methods, check_batch_size
    from coca_eval.cli.output import stderr
    from coca_eval.opencompass.config import ModelSettings
    from coca_eval.opencompass.task import evaluate_opencompass
    from coca_eval.results import check_overwrite

    if device_map is not None:
        raise CocaEvalError("--device-map is not supported by the OpenCompass bridge; use --device")
    check_batch_size(batch_size)
    methods = build_cli_methods(models, ropes, methods_file, dtype, backend)
    if any(m.backend != "hf" for m in methods):
        raise CocaEvalError("the OpenCompass bridge runs the hf backend only (drop --backend / backend:)")
    check_overwrite(output, "opencompass", None, force)
    settings = ModelSettings(device=device, batch_size=batch_size, max_seq_len=max_seq_len)
    run = evaluate_opencompass(methods, datasets, data_root, work_dir, output, settings, stderr(), workers)
    stderr().print(f"OpenCompass work directory: {run.config['work_dir']}", markup=False, highlight=False)
    _print_table5(run, output)


@opencompass.command("import")
@click.argument("summary", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the results JSON here (default: runs/opencompass-TIMESTAMP.json).",
)
def opencompass_import(summary, output) -> None:
    """Turn an OpenCompass summary CSV into our cells (missing results become error cells)."""
    from coca_eval.opencompass.task import import_summary

    run = import_summary(summary, output)
    _print_table5(run, output)
