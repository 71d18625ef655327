"""The result contract (schema ``coca-eval/3``; ``coca-eval/1`` and ``/2`` files still load): typed cells
and runs, saved with :func:`coca_eval.files.write_atomic`.

``coca-eval/3`` states each accuracy-like cell's unit (``unit``): ``points`` (0-100, as RULER, HELMET
and their ports print scores) or ``fraction`` (0-1). Every task now writes points; a cell without a
unit in an older file holds what its task wrote then (passkey: fractions), and
:mod:`coca_eval.units` reads every such cell in points, so old runs report and gate as new ones (and
writes a run with every unit stated: :func:`coca_eval.taskspec.save_run_in_points`).

``coca-eval/2`` adds the task's code version (``config.task_version``), whether the checkout had
uncommitted changes (``git_dirty``) and each cell's device and dtype. A ``coca-eval/1`` file reads
with those unknown (None); nothing else changed, so old baselines and reports keep working.

Other tools and the CI gate read these files, so the models validate on the way in as well as out:
a corrupt or hand-edited results file is a one-line :class:`CocaEvalError`, not a traceback.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from coca_eval import __version__
from coca_eval.errors import CocaEvalError
from coca_eval.files import write_atomic

SCHEMA = "coca-eval/3"
READABLE_SCHEMAS = ("coca-eval/1", "coca-eval/2", "coca-eval/3")
Unit = Literal["points", "fraction"]  # an accuracy-like value: 0-100 or 0-1
Status = Literal["ok", "oom", "inf", "error", "partial"]  # partial: one shard's parts, see coca-eval merge


class Cell(BaseModel):
    """One number of one table: (task, method, length or dataset, metric) -> value."""

    model_config = ConfigDict(extra="forbid")

    task: str
    method: str
    metric: str
    length: int | None = None
    dataset: str | None = None
    value: float | None = None
    status: Status = "ok"
    n: int | None = None
    device: str | None = None  # where it ran (coca-eval/2)
    dtype: str | None = None  # the weights' dtype (coca-eval/2)
    unit: Unit | None = None  # an accuracy-like value's unit (coca-eval/3); None: not one, or unstated
    detail: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _value_matches_status(self) -> Cell:
        if self.status == "ok" and (self.value is None or not math.isfinite(self.value)):
            raise ValueError("an ok cell needs a finite value (infinite perplexity is status 'inf')")
        if self.status != "ok" and self.value is not None:
            raise ValueError(f"a cell with status {self.status!r} must have value null")
        return self


LOWER_IS_BETTER = frozenset(
    {
        "ppl",
        "perplexity",
        "nll",
        "loss",
        "bpb",
        "bits_per_byte",
        "word_perplexity",
        "byte_perplexity",
        "word_ppl",
    }
)


def value_mismatch(cell: Cell, value: float, n: int) -> str | None:
    """Why ``cell`` does not hold ``value`` over ``n`` units (what its own records give), or None."""
    if cell.n != n:
        return f"n is {cell.n} but the cell holds {n} units"
    if cell.value is None or not math.isclose(cell.value, value, rel_tol=1e-9, abs_tol=1e-9):
        return f"the value is {cell.value} but its {n} units give {value:g}"
    return None


def units_by_key(pairs: Iterable[tuple[Hashable, Any]], noun: str = "sample") -> dict:
    """``{key: value}`` of a cell's units (its samples by index, its documents by id), refusing a key
    met twice: a unit held twice is counted twice, in the cell's value, its ``n`` and its interval, and a
    dict built over it would hide the second copy from every check. Raises ``ValueError``, which the
    loader of a results file turns into one line naming the file and the cell."""
    units: dict = {}
    for key, value in pairs:
        if key in units:
            raise ValueError(f"{noun} {key!r} appears twice (each {noun} counts once)")
        units[key] = value
    return units


def unique_units(keys: Iterable[Hashable], where: str, noun: str = "sample") -> None:
    """:func:`units_by_key`'s rule for a file being read (an import): a key met twice is a one-line
    :class:`CocaEvalError` naming ``where`` (the file) and the unit."""
    try:
        units_by_key(((key, None) for key in keys), noun)
    except ValueError as exc:
        raise CocaEvalError(f"{where}: {exc}") from None


def higher_is_better(metric: str) -> bool:
    """Which way "best" points for a metric name: perplexity-like metrics are best low, accuracies and
    scores high (a task's spec says it for its own metric: :func:`coca_eval.taskspec.higher_is_better`)."""
    return metric.lower() not in LOWER_IS_BETTER


@dataclass(frozen=True)
class CellPair:
    """A baseline cell and the candidate cell it is compared with (the gate's unit of comparison)."""

    base: Cell
    cand: Cell

    @property
    def where(self) -> str:
        """``ppl 'SmolLM2-135M' @ 1024``: how messages name the cell."""
        at = self.base.length if self.base.length is not None else self.base.dataset
        return f"{self.base.task} {self.base.method!r} @ {at}"


class MethodRecord(BaseModel):
    """One method as the run recorded it (``config.methods``)."""

    model_config = ConfigDict(extra="allow")

    label: str
    model: str | None = None
    rope: str | None = None
    dtype: str | None = None
    backend: str | None = None
    trained_context: int | None = None


class RunConfig(BaseModel):
    """What a run's ``config`` holds: the task, its version and parameters, the weights' fingerprints,
    the methods and the environment. Tasks add their own keys (documents, work_dir, ...)."""

    model_config = ConfigDict(extra="allow")

    task: str | None = None
    task_version: int | None = None  # coca-eval/2
    params: dict[str, Any] = Field(default_factory=dict)
    weights: dict[str, str] = Field(default_factory=dict)
    journal: str | None = None
    methods: list[MethodRecord] = Field(default_factory=list)
    environment: dict[str, Any] = Field(default_factory=dict)


class Run(BaseModel):
    """The cells of one invocation plus everything needed to reproduce them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["coca-eval/1", "coca-eval/2", "coca-eval/3"] = Field(default=SCHEMA, alias="schema")
    created: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    coca_eval_version: str = __version__
    git: str | None = None
    git_dirty: bool | None = None  # uncommitted changes in the checkout (coca-eval/2)
    config: dict[str, Any] = Field(default_factory=dict)
    cells: list[Cell] = Field(default_factory=list)

    @model_validator(mode="after")
    def _config_is_typed(self) -> Run:
        RunConfig.model_validate(self.config)  # the fields every tool reads have the right types
        return self

    @property
    def settings(self) -> RunConfig:
        """The config as a typed model (unknown keys kept as extras)."""
        return RunConfig.model_validate(self.config)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2, allow_nan=False) + "\n"


GZIP_SUFFIX = ".gz"
_GZIP_MAGIC = b"\x1f\x8b"


def save_run(run: Run, path: Path) -> None:
    """A path ending in ``.gz`` (``run.json.gz``) is written gzip-compressed: runs that keep every
    sample's answer (passkey, RULER) shrink about fivefold, which matters for results kept in git.
    The compressed bytes carry no timestamp, so the same run gives the same file."""
    path = Path(path)
    text = run.to_json()
    if path.name.endswith(GZIP_SUFFIX):
        write_atomic(path, gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        write_atomic(path, text)


def read_results_text(path: Path) -> str:
    """A results file's JSON text, plain or gzip-compressed (told by its first bytes, not its name,
    so a renamed file still reads). Raises ``OSError``/``UnicodeDecodeError`` like ``read_text``."""
    data = Path(path).read_bytes()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise OSError(f"damaged gzip data ({exc})") from None
    return data.decode("utf-8")


def load_run(path: Path) -> Run:
    """Read and validate a results file (plain or ``.gz``); any problem is a one-line user error."""
    path = Path(path)
    try:
        raw = json.loads(read_results_text(path))
    except FileNotFoundError:
        raise CocaEvalError(f"results file not found: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CocaEvalError(f"results file {path} is not readable JSON: {exc}") from None
    if not isinstance(raw, dict) or raw.get("schema") not in READABLE_SCHEMAS:
        raise CocaEvalError(f"results file {path} is not a {' or '.join(READABLE_SCHEMAS)} document")
    try:
        run = Run.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CocaEvalError(f"results file {path} is invalid at {where}: {first['msg']}") from None
    return run


def require_complete(run: Run, path: Path) -> Run:
    """Refuse a shard's results file (``partial`` cells): tables and the gate need whole cells, which
    only ``coca-eval merge`` forms from every shard's parts."""
    partial = next((c for c in run.cells if c.status == "partial"), None)
    if partial is not None:
        shard = partial.detail.get("shard", "?")
        raise CocaEvalError(
            f"{path} holds partial cells (shard {shard} of a run); run `coca-eval merge` on all the "
            "shard files first and use its output"
        )
    return run


def check_overwrite(
    output: Path | None,
    task: str,
    params: dict[str, Any] | None,
    force: bool,
    split: dict | None = None,
    methods: list[dict[str, Any]] | None = None,
) -> None:
    """Refuse to replace an existing ``output`` that holds another task's run, a run under other
    parameters, another shard of the run (``split`` is the run's ``{"shard": ...}`` entry), a run of
    other methods (``methods``: the run's ``config.methods``), or something that is not a results file
    at all: rerunning the same command resumes and rewrites it, anything else would silently lose those
    cells (``--force`` says the user means it). A run of other methods is refused rather than joined:
    the file is rewritten from this run's cells alone, so a baseline's rows would vanish from it."""
    if force or output is None or not Path(output).exists():
        return
    hint = "pass --force to overwrite it or give another --output"
    try:
        raw = json.loads(read_results_text(Path(output)))
        config = raw["config"] if raw.get("schema") in READABLE_SCHEMAS else None
        held = config.get("task"), config.get("params"), config.get("shard")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise CocaEvalError(f"{output} exists and is not a coca-eval results file; {hint}") from None
    if held[0] != task:
        raise CocaEvalError(f"{output} holds a {held[0]} run, not {task}; {hint}")
    if split is not None and held[2] != split.get("shard"):
        raise CocaEvalError(
            f"{output} holds {_shard_text(held[2])}, not {_shard_text(split.get('shard'))}; {hint}"
        )
    ours = json.loads(json.dumps(params, default=str)) if params is not None else None
    if ours is not None and held[1] != ours:
        theirs = held[1] if isinstance(held[1], dict) else {}
        differ = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
        raise CocaEvalError(f"{output} holds a {task} run with other {', '.join(differ)}; {hint}")
    held_methods = config.get("methods")
    if methods is not None and isinstance(held_methods, list) and not _same_rows(held_methods, methods):
        raise CocaEvalError(
            f"{output} holds a {task} run of other methods ({_names(held_methods)}, not {_names(methods)}); "
            f"{hint}"
        )


METHOD_IDENTITY = ("model", "rope", "dtype", "backend")  # what changes a method's numbers; not its label


def _same_rows(held: list, ours: list[dict[str, Any]]) -> bool:
    """The same methods in any order (a method is the same when nothing that changes its numbers
    differs), compared on the identity keys the file records for every row (an older file may lack
    one; what it does not say cannot tell two methods apart)."""
    if not all(isinstance(m, dict) for m in held):
        return False
    keys = [key for key in METHOD_IDENTITY if all(key in m for m in held)]

    def rows(methods: list) -> list[str]:
        return sorted(json.dumps({k: m.get(k) for k in keys}, sort_keys=True, default=str) for m in methods)

    return rows(held) == rows(ours)


def _names(methods: list) -> str:
    """``RoFormer (checkpoints/rope), ...``: each method's label with its model."""

    def name(m: Any) -> str:
        if not isinstance(m, dict):
            return str(m)
        label, model = m.get("label"), m.get("model")
        return f"{label} ({model})" if label and model and label != model else str(label or model)

    return ", ".join(map(name, methods))


def _shard_text(shard: Any) -> str:
    """``shard 2/8 of a run`` or ``a whole run`` (for messages about a ``config.shard`` entry)."""
    if isinstance(shard, dict):
        return f"shard {shard.get('index')}/{shard.get('count')} of a run"
    return "a whole run"
