"""The commands that are not tasks: report, gate, merge, tasks, models, convert.

Registered (lazily) in :mod:`coca_eval.cli.builtin`; this module is imported only to run one of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from coca_eval.errors import CocaEvalError


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("output", type=click.Path(path_type=Path))
@click.option(
    "--from-llama",
    is_flag=True,
    help="SOURCE is a plain LLaMA checkpoint: start CoCA from it "
    "(t_proj initialised from k_proj), ready for the paper's fine-tuning recipe.",
)
@click.option("--variant", type=click.Choice(["slack", "strict"]), default="slack", show_default=True)
def convert(source: Path, output: Path, from_llama: bool, variant: str) -> None:
    """Write a coca-eval CoCA checkpoint from a reference-repository CoCA checkpoint (LLaMA-CoCA with
    t_proj, or NeoX-CoCA with fused q/t/v) or, with --from-llama, from a plain LLaMA checkpoint."""
    from coca_eval.cli.output import stderr
    from coca_eval.models.convert import convert_from_llama, convert_reference

    written = (convert_from_llama if from_llama else convert_reference)(source, output, variant)
    stderr().print(f"CoCA ({variant}) checkpoint written to {written}; evaluate it with --model {written}")


@click.command()
@click.argument("family", required=False)
def tasks(family: str | None) -> None:
    """List registered tasks and their presets; with FAMILY (ruler, helmet, ...), that family's presets
    and its own tasks (what --tasks takes)."""
    import pandas as pd

    from coca_eval.cli.output import stdout
    from coca_eval.errors import CocaEvalError
    from coca_eval.presets import list_presets
    from coca_eval.tables import rich_table
    from coca_eval.taskspec import TASKS

    names = TASKS.names()
    if family is not None and family not in names:
        raise CocaEvalError(f"no task {family!r} (tasks: {', '.join(names)})")
    presets, rows = list_presets(), []
    chosen = [family, *(n for n in names if n.startswith(f"{family}_"))] if family else names  # longbench_v2
    for name in chosen:
        mine = [p for p in presets if p.task == name] or [None]
        for k, preset in enumerate(mine):  # the task named once, on its first preset's row
            described = preset.description if preset else TASKS.get(name).description
            rows.append((name if k == 0 else "", preset.name if preset else "", described))
    frame = pd.DataFrame(rows, columns=["task", "preset", "description"]).set_index("task")
    stdout().print(rich_table(frame, "Tasks and presets", whole_labels=True))
    catalogued = [n for n in names if TASKS.get(n).catalogue is not None]
    if family is None:
        if catalogued:
            stdout().print(f"A family's own tasks: coca-eval tasks NAME ({', '.join(catalogued)}).")
        return
    if TASKS.get(family).catalogue is not None:
        columns, listed = TASKS.get(family).catalogue()
        frame = pd.DataFrame(listed, columns=columns).set_index(columns[0])
        stdout().print(rich_table(frame, f"{family} --tasks", whole_labels=True))


@click.command()
def models() -> None:
    """List model presets (any local directory or hub id works too)."""
    import pandas as pd

    from coca_eval.cli.output import stdout
    from coca_eval.models.presets import MODEL_PRESETS
    from coca_eval.tables import rich_table

    rows = [
        (name, preset.display_name, preset.params, str(preset.trained_context), preset.description)
        for name, preset in MODEL_PRESETS.items()
    ]
    columns = ["name", "model", "params", "trained context", "source"]
    frame = pd.DataFrame(rows, columns=columns).set_index("name")
    stdout().print(rich_table(frame, "Model presets", whole_labels=True))


def _report_formats() -> list[str]:
    from coca_eval.report.definition import FORMATS

    return list(FORMATS)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(_report_formats()),
    help="Output format (repeatable). Default: md.",
)
@click.option("--out", "out_dir", default="report", show_default=True, type=click.Path(path_type=Path))
@click.option("--definition", help="Report definition: a YAML file or a shipped name (reports/definitions/).")
@click.option("--title", help="Report title.")
@click.option("--paper", multiple=True, help="Set a paper table beside ours: table1..table5, v1-table4, ...")
@click.option("--delta-vs", help="Also show every row as signed differences to this method (Table 3 style).")
@click.option(
    "--delta-pair",
    "delta_pairs",
    nargs=2,
    multiple=True,
    metavar="CANDIDATE BASELINE",
    help="Also show CANDIDATE as its difference to BASELINE (repeatable: the paper's Table 3 gives "
    "CoCA-Strict against CoCA-Slack at each NTK factor).",
)
@click.option("--intervals", is_flag=True, help="Show 95% intervals (Wilson; document bootstrap for PPL).")
@click.option("--show-n", is_flag=True, help="Show n (documents or samples) in every cell.")
@click.option("--digits", type=int, help="Decimals of printed values (default 2).")
@click.option(
    "--metric",
    help="Show this metric of the cells instead of their own, where the task offers it: bpb (bits per "
    "byte) or word_ppl (word perplexity) for ppl, comparable across tokenizers.",
)
@click.option(
    "--trained-context", type=int, help="Trained context for Fig 5 (default: from the run's model)."
)
@click.option("--no-plots", is_flag=True, help="Tables only.")
@click.option(
    "--side-by-side",
    is_flag=True,
    help="Two runs (baseline, candidate) cell by cell, each pair marked paired or unpaired and why "
    "(e.g. an imported lm-eval run beside ours): side_by_side.csv and .md under --out.",
)
def report(runs, formats, out_dir, definition, no_plots, side_by_side, **overrides) -> None:
    """Tables (Markdown, LaTeX, CSV, HTML) and plots from one or more results files, like the paper's.

    \b
    coca-eval report runs/t1.json runs/t2.json --paper table1 --paper table2 --format md --format latex
    coca-eval report run.json --definition coca-table1 --intervals --delta-vs "LLaMA-7B"
    coca-eval report ppl-smollm.json ppl-gemma.json --metric bpb
    """
    from coca_eval.cli.output import stderr, stdout
    from coca_eval.report import build_report, load_definition
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    if side_by_side:
        _side_by_side(runs, out_dir)
        return
    spec = load_definition(definition).with_overrides(**overrides, plots=False if no_plots else None)
    try:
        output = build_report(runs, spec, formats or ("md",), out_dir)
    except OSError as exc:  # a plot or table that cannot be written: one line, not a traceback
        raise CocaEvalError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    for table in output.tables:
        stdout().print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
    stderr().print(f"report written to {out_dir} ({len(output.files)} files, {len(output.plots)} plots)")


def _side_by_side(runs, out_dir: Path) -> None:
    """``report --side-by-side BASELINE CANDIDATE``: the table on the terminal, CSV and Markdown files."""
    from coca_eval.cli.output import stderr, stdout
    from coca_eval.files import write_atomic
    from coca_eval.report.side_by_side import side_by_side
    from coca_eval.results import require_complete
    from coca_eval.tables import rich_table
    from coca_eval.taskspec import load_checked_run

    if len(runs) != 2:
        raise CocaEvalError(f"--side-by-side takes two results files (baseline, candidate), not {len(runs)}")
    base, cand = (require_complete(load_checked_run(Path(p)), Path(p)) for p in runs)
    frame = side_by_side(base, cand)
    shown = frame.fillna("-").astype(str).set_index("method")
    stdout().print(rich_table(shown, title=f"[bold]{runs[0]} | {runs[1]}[/bold]"))
    try:
        write_atomic(Path(out_dir) / "side_by_side.csv", frame.to_csv(index=False))
        write_atomic(Path(out_dir) / "side_by_side.md", frame.fillna("-").to_markdown(index=False) + "\n")
    except OSError as exc:
        raise CocaEvalError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    paired = int((frame["pairing"] == "paired").sum())
    stderr().print(f"{paired} of {len(frame)} cells pair sample by sample; written to {out_dir}")


def gated_runs(runs: tuple, baseline: tuple, candidate: tuple) -> tuple[tuple, tuple]:
    """The runs to pair: ``--baseline`` / ``--candidate`` (repeated, paired in order), or the two
    positional paths ``BASELINE CANDIDATE``; one form, never both."""
    if runs and (baseline or candidate):
        raise CocaEvalError("give the runs as BASELINE CANDIDATE or with --baseline/--candidate, not both")
    if runs:
        if len(runs) != 2:
            raise CocaEvalError(
                f"gate takes two runs, BASELINE CANDIDATE (got {len(runs)}); several pairs: repeat "
                "--baseline B --candidate C"
            )
        return runs[:1], runs[1:]
    if not baseline or len(baseline) != len(candidate):
        raise CocaEvalError(
            "give one --candidate for every --baseline (they pair up in order), or BASELINE CANDIDATE"
        )
    return baseline, candidate


@click.command()
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--baseline", multiple=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--candidate", multiple=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--max-ppl-rise", default="2%", show_default=True, help="Tolerated relative PPL rise.")
@click.option(
    "--max-acc-drop",
    default="5",
    show_default=True,
    help="Tolerated drop of an accuracy-like score, in points (0-100): passkey, RULER, HELMET, BABILong, "
    "MRCR, GraphWalks, LongBench, AA-LCR and imported lm-eval scores.",
)
@click.option("--alpha", default=0.05, show_default=True, type=float, help="Significance level (overall).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
@click.option("--bootstrap", "n_boot", default=5000, show_default=True, type=int, help="Bootstrap draws.")
@click.option(
    "--baseline-method",
    metavar="LABEL",
    help="Gate only this method (row) of the baseline runs; with --candidate-method, two rows of one run "
    "can be compared (the same file as --baseline and --candidate).",
)
@click.option(
    "--candidate-method", metavar="LABEL", help="Gate only this method (row) of the candidate runs."
)
@click.option(
    "--from-position",
    metavar="trained|N",
    help="Compare perplexity only over the positions >= N in the window (trained: each baseline "
    "method's trained context): the loss past the trained length, paired over documents.",
)
@click.option(
    "--require-power",
    is_flag=True,
    help="Fail (exit 1) on an inconclusive cell too: one whose 95 % interval is wider than the tolerance, "
    "or whose baseline scores 0, so a drop of the tolerance could not have been seen.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON instead of a table.")
def gate(
    runs,
    baseline,
    candidate,
    max_ppl_rise,
    max_acc_drop,
    alpha,
    seed,
    n_boot,
    baseline_method,
    candidate_method,
    from_position,
    require_power,
    as_json,
) -> None:
    """Fail (exit 1) when a candidate run regresses against a baseline run, beyond tolerance and
    significantly; exit 2 when the runs were made under different protocols.

    \b
    coca-eval gate --baseline base/ppl.json --candidate new/ppl.json --max-ppl-rise 2%
    coca-eval gate base/ppl.json new/ppl.json      # the same: BASELINE CANDIDATE
    coca-eval gate --baseline b/ppl.json --candidate c/ppl.json --baseline b/pk.json --candidate c/pk.json
    coca-eval gate --baseline t1.json --candidate t1.json --baseline-method "RoFormer + dynamic NTK" \\
        --candidate-method "RoFormer + dynamic NTK & CoCA"
    coca-eval gate --baseline base/16k.json --candidate new/16k.json --from-position trained
    """
    import json

    from coca_eval.cli.output import stdout
    from coca_eval.gate import append_step_summary, make_options, rich_summary, run_gate, verdict_json
    from coca_eval.gate.positions import parse_from_position, past_position_pairs
    from coca_eval.results import require_complete
    from coca_eval.taskspec import load_checked_run

    baseline, candidate = gated_runs(runs, baseline, candidate)
    options = make_options(max_ppl_rise, max_acc_drop, alpha, seed, n_boot, require_power)
    start = parse_from_position(from_position)
    pairs = [
        (require_complete(load_checked_run(b), b), require_complete(load_checked_run(c), c))
        for b, c in zip(baseline, candidate, strict=True)
    ]
    pairs = [
        (_rows(b, baseline_method, "baseline"), _rows(c, candidate_method, "candidate")) for b, c in pairs
    ]
    if start is not None:
        pairs = past_position_pairs(pairs, start)
    result = run_gate(pairs, options)
    if as_json:
        click.echo(json.dumps(verdict_json(result), indent=2))
    else:
        stdout().print(rich_summary(result, stdout().width))
        for note in result.notes:
            stdout().print(f"note: {note}", markup=False)
    append_step_summary(result)
    sys.exit(result.exit_code)


def _rows(run, label: str | None, side: str):
    from coca_eval.gate.protocol import select_method

    return run if label is None else select_method(run, label, side)


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
    from coca_eval.results import check_overwrite
    from coca_eval.taskspec import save_run_in_points

    run = merge_shard_files(shards)
    config = run.config
    check_overwrite(output, config["task"], config.get("params"), force, {}, config.get("methods"))
    save_run_in_points(run, output)
    heading = f"[bold]{run.config['task']}[/bold]: {len(shards)} shard files merged"
    print_length_table(run, heading, 3, output)
