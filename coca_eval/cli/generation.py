"""What every generation family's command prints when its run ends, and how it fails on cells that
could not run."""

from __future__ import annotations


def print_run_tables(run, written, heading: str, method_table, summary) -> None:
    """What a generation family prints when its run ends: ``heading``, each method's table
    (``method_table(method)``), then ``summary()``, each with its notes; a shard's partial run prints
    only what it holds. A cell that could not run then fails the command (see
    :func:`refuse_error_cells`)."""
    from coca_eval.cli.output import shard_summary, stderr, stdout
    from coca_eval.report.render import terminal_frame
    from coca_eval.tables import rich_table

    if any(cell.status == "partial" for cell in run.cells):
        stderr().print(shard_summary(run, written), markup=False, highlight=False, soft_wrap=True)
        return
    stdout().print(heading)
    tables = [method_table(m) for m in dict.fromkeys(c.method for c in run.cells)]
    for table in (*tables, summary()):
        stdout().print(rich_table(terminal_frame(table), title=f"[bold]{table.title}[/bold]"))
        for note in table.notes:
            stdout().print(note, markup=False, highlight=False, soft_wrap=True)
    stderr().print(f"results written to {written}", markup=False, highlight=False, soft_wrap=True)
    refuse_error_cells(run)


def refuse_error_cells(run) -> None:
    """A cell that could not run (a length below the prompt's fixed parts, or past the model's
    positions, or a sample answered from non-finite logits) is an ``error`` cell in the results, and the
    command says so in one line, exit 2: every generation family alike (passkey's cells have no dataset
    and are named by their length)."""
    from coca_eval.errors import CocaEvalError

    errors = [c for c in run.cells if c.status == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more error cells)" if len(errors) > 1 else ""
        where = f"{first.dataset} @ {first.length}" if first.dataset else f"{first.task} @ {first.length}"
        raise CocaEvalError(f"{where}: {first.detail.get('error')}{more}")
