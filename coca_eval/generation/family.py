"""Everything a generation family read like BABILong wires into its spec, in one object: tables of
tasks x lengths with their average, the effective length at ``share`` % of the average at the run's
shortest length (:mod:`coca_eval.generation.relative`), the hooks that record it in a run and a
merged run, the gate's run check, the contradiction check with the family's scorer and the console
output. :func:`family_spec` builds the whole spec from it, so a new family writes its tasks, draws,
scorer and runner, and nothing of this.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from coca_eval.generation.spec import generation_gate, generation_report, generation_spec
from coca_eval.registry import lazy
from coca_eval.taskspec import ConsoleTables, TaskSpec

DIGITS = 1  # scores print with one decimal, as RULER's, HELMET's and BABILong's tables do


@dataclass(frozen=True)
class FamilyReading:
    """How a family's cells read: ``name`` (its task), ``title`` (how tables name it), ``share`` (the
    default bar, % of the shortest length's average), ``task_of`` and ``score`` (lazy references to
    the family's task look-up and per-sample scorer, for the contradiction check)."""

    name: str
    title: str
    task_of: str
    score: str
    share: float = 85.0

    def own(self, cells: Sequence[Any]) -> list:
        return [c for c in cells if c.task == self.name]

    def whole(self, cells: Sequence[Any]) -> list[tuple[str, list[str]]]:
        """One group: every task of the run, in the order they first appear."""
        return [("", list(dict.fromkeys(c.dataset for c in cells if c.dataset)))]

    def task_table(self, cells: Sequence[Any], method: str):
        from coca_eval.generation.effective import length_scores
        from coca_eval.lengths import format_length
        from coca_eval.report.layout import Entry, ReportTable, Row
        from coca_eval.tables import cell_text

        mine = [c for c in self.own(cells) if c.method == method]
        lengths, tasks = sorted({c.length for c in mine}), self.whole(mine)[0][1]
        found = {(c.dataset, c.length): c for c in mine}
        rows = [
            Row(t, [Entry(cell_text(found[t, n], DIGITS) if (t, n) in found else "") for n in lengths])
            for t in tasks
        ]
        averages = {s.length: s.average for s in length_scores(mine, tasks)}
        rows.append(Row("Average", [Entry(average_text(averages.get(n)), True) for n in lengths]))
        title = f"{self.title} scores of {method} by task and length"
        return ReportTable(f"{self.name}_{method}", title, [format_length(n) for n in lengths], rows, "Task")

    def summary_table(self, cells: Sequence[Any], share: float):
        from coca_eval.generation.relative import read_relative
        from coca_eval.lengths import format_length
        from coca_eval.report.layout import Entry, ReportTable, Row

        cells = self.own(cells)
        lengths, rows = sorted({c.length for c in cells}), []
        for method in dict.fromkeys(c.method for c in cells):
            mine = [c for c in cells if c.method == method]
            read = read_relative(mine, self.whole(mine)[0][1], share)
            by_length = {s.length: s.average for s in read.scores}
            entries = [Entry(average_text(by_length.get(n))) for n in lengths]
            rows.append(Row(method, [*entries, Entry(read.effective_text)]))
        note = (
            f"Average over tasks. Effective length: the longest length up to which the average's one-sided "
            f"95 % lower bound reaches {share:g} % of the average at the shortest length."
        )
        columns = [format_length(n) for n in lengths] + ["Effective (95 % bound)"]
        return ReportTable(self.name, f"{self.title} average score by length", columns, rows, notes=[note])

    def tables(self, cells: Sequence[Any], definition=None, runs: Sequence[Any] = ()) -> list:
        from coca_eval.generation.relative import recorded_share
        from coca_eval.generation.report import summary_and_methods

        return summary_and_methods(
            self.own(cells),
            lambda: recorded_share(runs, self.share, self.title),
            self.summary_table,
            lambda mine, method, _share: self.task_table(mine, method),  # its averages need no bar
        )

    def finish(self, run, runner, methods, params, **_) -> None:
        from coca_eval.generation.relative import record_relative

        record_relative(run, self.name, params.share, self.whole)

    def merged(self, run) -> None:
        from coca_eval.generation.relative import merged_share, record_relative

        record_relative(run, self.name, merged_share(run, self.share), self.whole)

    def run_checks(self, base, cand, options) -> list:
        from coca_eval.generation.relative import recorded_share, relative_length_checks

        share = recorded_share([base], self.share, self.title)
        return relative_length_checks(base, cand, self.name, share, self.whole)

    def contradiction(self, cell) -> str | None:
        from coca_eval.generation.records import scored_contradiction
        from coca_eval.registry import resolve

        task_of = resolve(self.task_of)
        return scored_contradiction(cell, task_of(cell.dataset or ""), resolve(self.score))

    def console(self, run, params) -> ConsoleTables:
        return ConsoleTables(
            run_heading(self.title, params),
            lambda method: self.task_table(run.cells, method),
            lambda: self.summary_table(run.cells, params.share),
        )


def run_heading(title: str, params) -> str:
    """The heading a family's command prints over its tables: N, samples, seed, chat template, and
    where the samples came from for a family that reads more than one ``source`` (BABILong's, GraphWalks')."""
    source = getattr(params, "source", None)
    where = f", source {source}" if source else ""
    return (
        f"[bold]{title}[/bold]{where}, N = prompt + answer budget, {params.samples} samples per task and "
        f"length, seed {params.seed}, chat template {params.chat_template}"
    )


def average_text(value: float | None) -> str:
    """An average in a family's tables (one decimal), or "-" where a length has none."""
    return "-" if value is None else f"{value:.{DIGITS}f}"


def family_spec(
    reading: FamilyReading,
    *,
    version: int,
    description: str,
    make_params: str | Callable,
    make_runner: str | Callable,
    command: str | None = None,
    check: Callable | None = None,
    graded: bool = False,
    protocol_keys: tuple[str, ...] = ("chat_template", "answer_budget"),
    plots: Callable | None = None,
    **own: Any,
) -> TaskSpec:
    """The spec of a family read as ``reading`` says: a generation spec
    (:func:`~coca_eval.generation.spec.generation_spec`) whose records, splits and merges, tables,
    console and relative effective-length check all come from ``reading``. ``make_params``,
    ``make_runner`` and ``command`` are lazy ``"module:attr"`` references (the first two may be lazy hooks
    already, as :class:`~coca_eval.conventions.TaskPackage` builds them). A family whose sample
    scores are graded (a ratio, an F1) is ``graded``: the gate pairs the scores' mean, not full credit;
    ``protocol_keys`` are what its cells must share to be compared, ``plots`` its report figures and
    ``own`` any other spec field (``preset_params``, ``shortest``)."""
    title = reading.title
    return generation_spec(
        reading.name,
        version=version,
        description=description,
        make_params=_hook(make_params),
        make_runner=_hook(make_runner),
        finish=reading.finish,
        check=check,
        contradiction=reading.contradiction,
        merged=reading.merged,
        command=command,
        console=reading.console,
        report=generation_report(
            title,
            protocol=lambda run: f"{title}: scores x 100, N = prompt + answer budget.",
            tables=reading.tables,
            plots=plots,
        ),
        gate=generation_gate(
            title,
            run_checks=reading.run_checks,
            protocol_keys=protocol_keys,
            **({"test": lazy("coca_eval.generation.gate:paired_mean_test")} if graded else {}),
        ),
        **own,
    )


def _hook(reference: str | Callable) -> Callable:
    """A hook from its ``"module:attr"`` reference, or the lazy hook given."""
    return lazy(reference) if isinstance(reference, str) else reference
