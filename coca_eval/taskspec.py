"""The task registry: one :class:`TaskSpec` per task, and nothing outside a task's package names it.

A task (``ppl``, ``passkey``, ``opencompass``, a later analysis, a third-party plug-in) lives in its own
package and registers one spec at import: how to build its parameters and its cell runner, its metric
and which way is better, and the hooks the report (protocol caption, interval, tables, plots) and the
gate (paired test, tolerance, what makes two runs comparable) call. :mod:`coca_eval.api`,
:mod:`coca_eval.report` and :mod:`coca_eval.gate` dispatch through the spec only.

This module is imported by ``coca-eval --help``: it imports nothing heavy, and neither may a task's
spec module (hooks import their implementation inside the function).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coca_eval.registry import Registry

if TYPE_CHECKING:
    from coca_eval.gate.options import GateOptions
    from coca_eval.gate.runs import RunCheck
    from coca_eval.gate.stats import PairedResult
    from coca_eval.report.definition import ReportDefinition
    from coca_eval.report.layout import ReportTable
    from coca_eval.results import Cell, CellPair, Run

Plot = tuple[str, str]  # (file stem, caption)


@dataclass(frozen=True)
class PlotContext:
    """Where and how a task draws: ``source`` is set for a paper's numbers (only the length plot then),
    ``stem`` prefixes file names, ``context_of`` gives a method's trained context (or None)."""

    out_dir: Path
    definition: ReportDefinition
    stem: str
    source: str | None = None
    context_of: Callable[[str], int | None] = lambda method: None


@dataclass(frozen=True)
class ReportHooks:
    """How the report shows a task's cells; every field has a generic default."""

    table_title: str = ""  # "Perplexity by evaluation length"; default "<task> <metric> by length"
    protocol: Callable[[Run], str] | None = None  # one sentence under the task's tables
    interval: Callable[[Cell], tuple[float, float] | None] | None = None  # 95 % interval of an ok cell
    interval_note: str = ""  # says which interval the brackets show
    units: Callable[[Cell], int | None] | None = None  # what "n=" counts (default: ``cell.n``)
    units_note: str = ""  # "documents for perplexity": joined into the note under ``--show-n`` tables
    # its own layout, from its cells, the definition and the runs they came from (their settings)
    tables: Callable[[Sequence[Cell], ReportDefinition, Sequence[Run]], list[ReportTable]] | None = None
    plots: Callable[[Sequence[Cell], PlotContext], list[Plot]] | None = None  # default: metric vs length
    views: dict[str, Callable[[Cell], Cell]] = field(default_factory=dict)  # ``report --metric NAME``
    section: str | None = None  # plots under their own heading (``Analyses``) instead of ``Plots``


@dataclass(frozen=True)
class EffectKind:
    """How a paired effect reads: ``sign`` turns "worse" into the printed change (PPL rise +, accuracy
    drop -), ``percent`` prints it relative."""

    name: str
    sign: int = 1
    percent: bool = False

    def text(self, effect: float) -> str:
        change = self.sign * effect
        return f"{change:+.2%}" if self.percent else f"{change:+.2f}"


@dataclass(frozen=True)
class GateHooks:
    """The gate's view of a task.

    ``test(pair, options, seed)`` returns ``(units, result)`` or a reason to skip; ``result.effect`` is
    positive when the candidate is worse. ``protocol_keys`` are detail fields that must agree and
    ``units(cell)`` the documents or samples that must be the same ones in both runs.
    ``run_checks(base, cand, options)`` adds checks on numbers a whole run gives (RULER's effective
    length), as :class:`~coca_eval.gate.runs.RunCheck` s; a failed one fails the gate.
    ``positions(base, cand, start)`` restricts both runs to the positions ``>= start`` in the window
    (None: the trained context), for a task that keeps its loss by position (ppl).
    ``unit_params`` are run parameters that only decide what ``units`` returns (LongPPL's key-token
    source and rule): runs may differ in them, since their units are compared instead.
    ``units_mismatch(units_b, units_c, where)`` says what differs when the units do (default: a
    sentence built from ``units_differ``). ``notes(pairs)`` says what the verdict cannot show about
    the compared cells (LongPPL: key tokens the baseline judged for itself favour it).
    ``dataset_names_row``: the gate's table names each row by its cell's dataset as well as its length
    (RULER's task), where rows of one length are different tasks. ``strict_keys`` are protocol keys
    whose absence is a value of its own (a run that decoded no thought has no ``thinking`` key, and
    must not pair with one that did).
    """

    test: Callable[[CellPair, GateOptions, int], tuple[int, PairedResult] | str]
    tolerance: Callable[[GateOptions], float]
    effect: EffectKind
    protocol_keys: tuple[str, ...] = ()
    units: Callable[[Cell], dict] | None = None
    units_name: str = "units"  # "documents", in the note on too-small protocols
    units_differ: str = "units"  # "documents or their scored tokens", in the refusal to compare
    min_p_value: Callable[[int], float] | None = None  # smallest p ``units`` can give (a note if too big)
    change_name: str = "change"  # "perplexity change", in that note
    more_units_hint: str = ""  # "--num-docs"
    run_checks: Callable[[Run, Run, GateOptions], list[RunCheck]] | None = None
    positions: Callable[[Run, Run, int | None], tuple[Run, Run]] | None = None  # gate --from-position
    unit_params: tuple[str, ...] = ()
    units_mismatch: Callable[[dict, dict, str], str] | None = None
    notes: Callable[[Sequence[CellPair]], list[str]] | None = None
    strict_keys: tuple[str, ...] = ()
    dataset_names_row: bool = False  # a cell's dataset is a sub-task the gate's table names (RULER's)


@dataclass(frozen=True)
class ConsoleTables:
    """A run's terminal output: its heading (rich markup; None: the caller's), each method's table or
    tables (``method_table(method)``) and the summary table (``summary()``)."""

    heading: str | None
    method_table: Callable[[str], ReportTable | list[ReportTable]]
    summary: Callable[[], ReportTable]


@dataclass(frozen=True)
class TaskSpec:
    """One task: parameters, cell runner, metric and direction, report and gate hooks.

    ``make_runner(params, journal, progress, **options)`` returns a :class:`~coca_eval.runner.CellTask`;
    ``options`` are run settings that never change a number (batch size, prefix reuse) and are recorded
    in the run's environment. ``finish(run, runner, methods, params, **options)`` adds what the task
    wants in the run besides its cells. A task without ``make_runner`` runs through its own command
    (OpenCompass runs as a subprocess).

    ``combine(base, parts, context)`` forms a cell from every unit's journaled part (in unit order) and
    the ``context`` the runner measured (ppl's BOS policy), without a model. A task that has it can be
    split over processes (``--shard K/N``, torchrun): its runner then gets ``share=`` (a
    :class:`~coca_eval.distributed.share.Share`) and ``coca-eval merge`` calls ``combine`` on the shards'
    parts. ``merged(run)`` then adds to the merged run what ``finish`` adds to a whole one, from its cells
    and the settings the shards recorded.
    """

    name: str
    version: int
    metric: str
    lower_is_better: bool
    description: str = ""
    make_params: Callable[[dict[str, Any]], Any] | None = None
    make_runner: Callable[..., Any] | None = None
    finish: Callable[..., None] | None = None
    check: Callable[[Any, Any], None] | None = None  # (params, methods): fail fast before any model loads
    # params -> (the shortest length N it can build, what fills it): a shorter --lengths is refused
    shortest: Callable[[Any], tuple[int, str]] | None = None
    combine: Callable[..., Cell] | None = None  # parts -> cell without a model: the task can be split
    contradiction: Callable[[Cell], str | None] | None = None  # why a cell contradicts its own records
    config_model: str | None = None  # lazy "module:Model": the pydantic model of the task's config keys
    merged: Callable[[Run], None] | None = None  # what ``finish`` adds, redone from a merged run's cells
    preset_params: str | None = None  # lazy "module:Model": the pydantic model a preset's params satisfy
    command: str | None = None  # lazy "module:attr" of its click command
    # what its ``--tasks`` can name, for ``coca-eval tasks``: (columns, rows of text), lazily
    catalogue: Callable[[], tuple[list[str], list[list[str]]]] | None = None
    group: str | None = None  # a command group it sits under (``analyze``) rather than the top level
    # A generation family's task definitions (a Registry of them) and its per-sample scorer
    # ``score_sample(definition, output, answers)``: what another package reuses through the registry
    # instead of importing the family (HELMET's RULER recall tasks, imports of RULER's outputs).
    definitions: Callable[[], Any] | None = None
    score_sample: Callable[..., dict] | None = None
    # What a generation family's command prints after a run: ``console(run, params)`` -> a
    # :class:`ConsoleTables` (``params`` None for an imported run, which has no heading of its own).
    console: Callable[..., ConsoleTables] | None = None
    report: ReportHooks = field(default_factory=ReportHooks)
    gate: GateHooks | None = None
    # An accuracy-like task's cells are in ``points`` (0-100); None: not accuracy-like (perplexity).
    # ``old_unit``: what its cells held before results stated their unit (passkey: ``fraction``);
    # ``points_detail(detail)``: a fraction cell's detail with the numbers that follow its value (its
    # recorded interval) in points (:mod:`coca_eval.units` reads old files through it).
    unit: str | None = None
    old_unit: str | None = None
    points_detail: Callable[[dict], dict] | None = None

    @property
    def higher_is_better(self) -> bool:
        return not self.lower_is_better


TASKS = Registry[TaskSpec](
    "task",
    builtins=(
        "coca_eval.ppl.spec",
        "coca_eval.ppl.longppl.spec",
        "coca_eval.passkey.spec",
        "coca_eval.ruler.spec",  # registry entries: each family's spec, imported on the first look-up
        "coca_eval.helmet.spec",
        "coca_eval.babilong.spec",
        "coca_eval.graphwalks.spec",
        "coca_eval.mrcr.spec",
        "coca_eval.longbench.spec",
        "coca_eval.aa_lcr.spec",
        "coca_eval.opencompass.spec",
        "coca_eval.analyses.spec",
        "coca_eval.imported.spec",
    ),
    first=("ppl", "passkey", "opencompass"),  # the papers' order, whichever spec module loaded first
)


def register_task(spec: TaskSpec) -> TaskSpec:
    """Add a task (from its package, a plug-in, or a test)."""
    return TASKS.add(spec.name, spec)


def spec_for(task: str, metric: str | None = None) -> TaskSpec:
    """The registered spec, or a generic one for cells of a task this installation does not know
    (a results file from a plug-in that is not installed still renders)."""
    if task in TASKS:
        return TASKS.get(task)
    from coca_eval.results import higher_is_better

    return TaskSpec(task, 0, metric or "value", not higher_is_better(metric or "value"))


def higher_is_better(task: str, metric: str) -> bool:
    """Which way "best" points for a task's metric: the spec says for its own metric; other metric
    names (a ``--metric bpb`` view) go by the usual names (perplexity-like low, accuracies high)."""
    from coca_eval.results import higher_is_better as by_name

    spec = spec_for(task, metric)
    return spec.higher_is_better if metric == spec.metric else by_name(metric)


def load_checked_run(path: Path) -> Run:
    """:func:`coca_eval.results.load_run`, then each cell's per-unit detail (documents, samples) read
    through its task's typed records, so a hand-edited file (a string ``nll_sum``, a document without
    ``tokens``) is refused here in one line instead of failing deep inside ``report`` or ``gate``. The
    check lives here, above the schema, because only the task registry knows each task's records.
    Accuracy-like cells are read in points, whatever unit the file holds (:mod:`coca_eval.units`)."""
    from pydantic import ValidationError

    from coca_eval.errors import CocaEvalError
    from coca_eval.results import load_run

    run = in_points(load_run(path))
    _check_task_config(run, path)
    for index, cell in enumerate(run.cells):
        spec = spec_for(cell.task, cell.metric)
        hooks = spec.gate
        if hooks is None or hooks.units is None or cell.status == "partial":
            continue
        try:
            hooks.units(cell)
            contradiction = spec.contradiction(cell) if spec.contradiction is not None else None
        except (ValidationError, ValueError, TypeError, KeyError, AttributeError) as exc:
            reason = _first_error(exc) if isinstance(exc, ValidationError) else str(exc).splitlines()[0]
            raise CocaEvalError(f"results file {path} is invalid at cells.{index}.detail: {reason}") from None
        if contradiction is not None:
            raise CocaEvalError(f"results file {path} contradicts itself at cells.{index}: {contradiction}")
    return run


def in_points(run: Run) -> Run:
    """``run`` with every accuracy-like cell in points, by each task's unit (:mod:`coca_eval.units`)."""
    from coca_eval.units import run_in_points

    return run_in_points(run, spec_for)


def cell_in_points(cell: Cell, old: bool = False) -> Cell:
    """One cell in points by its task's unit (``old``: written before cells stated one, a journal's)."""
    from coca_eval.units import cell_in_points as scaled_cell

    return scaled_cell(cell, spec_for(cell.task, cell.metric), old)


def save_run_in_points(run: Run, path: Path) -> None:
    """:func:`~coca_eval.results.save_run` of ``run`` with every accuracy-like cell's unit stated."""
    from coca_eval.results import save_run

    save_run(in_points(run), path)


def _check_task_config(run, path) -> None:
    """The task's own config keys (RULER's ``effective_length``) read through its typed model."""
    from pydantic import ValidationError

    from coca_eval.errors import CocaEvalError
    from coca_eval.registry import resolve

    task = run.config.get("task")
    spec = TASKS.get(task) if isinstance(task, str) and task in TASKS else None
    if spec is None or spec.config_model is None:
        return
    try:
        resolve(spec.config_model).model_validate(run.config)
    except ValidationError as exc:
        raise CocaEvalError(f"results file {path} is invalid at config.{_first_error(exc)}") from None


def _first_error(exc) -> str:
    """``docs.0.tokens: Field required``: where pydantic's first error is, and what it says."""
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
