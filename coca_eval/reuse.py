"""Cells another run already finished, taken into this run's journal instead of computed again (``--reuse``).

A cell's key hashes everything that changes its number (task and protocol version, model and the
fingerprint of its weights, position patch, dtype, backend, dataset fingerprint, length), never the
row's label. So a row two tables share (a baseline that is Table 1's "RoFormer" and again a
fine-tuning table's base model, under another label) has one key, and the second run finds it,
finished, in the first run's journal. It is copied, not referenced: this run's journal stays complete
on its own, so the source may later move or go, and a rerun resumes without it.

What is taken for a key this run has not finished: the source's finished cell (a plain run), else the
per-document or per-sample parts the source holds (as part lines or inside a ``--shard`` job's partial
cells), so a half-finished cell elsewhere still saves its finished half. A ``--shard`` job takes parts
only: its own cell must be a partial one that ``coca-eval merge`` can combine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.results import read_results_text


def source_journal(path: Path) -> Path:
    """The journal behind ``path``: a ``*.journal.jsonl`` itself, else the one beside a results file
    (``run.json`` -> ``run.journal.jsonl``), else the one its ``config.journal`` names."""
    path = Path(path)
    if path.name.endswith(".journal.jsonl"):
        if not path.is_file():
            raise CocaEvalError(f"--reuse {path}: no such journal")
        return path
    if not path.is_file():
        raise CocaEvalError(f"--reuse {path}: no such results file")
    beside = path.with_suffix(".journal.jsonl")
    if beside.is_file():
        return beside
    named = _recorded_journal(path)
    if named is not None and named.is_file():
        return named
    raise CocaEvalError(
        f"--reuse {path}: its journal ({beside.name}) is not beside it; cells are matched by the keys a "
        "journal holds, so give the journal itself"
    )


def _recorded_journal(results: Path) -> Path | None:
    try:
        recorded = json.loads(read_results_text(results))["config"]["journal"]
    except (OSError, ValueError, KeyError, TypeError):
        raise CocaEvalError(f"--reuse {results}: not a coca-eval results file") from None
    return Path(recorded) if isinstance(recorded, str) else None


@dataclass(frozen=True)
class Adopted:
    """What was taken: finished cells, and parts of cells still to finish."""

    cells: int = 0
    parts: int = 0

    def describe(self, sources: Sequence[Path]) -> str:
        names = ", ".join(str(s) for s in sources)
        return f"reused from {names}: {self.cells} finished cell(s), {self.parts} part(s)"


def adopt(journal: Journal, sources: Sequence[Path], keys: Iterable[str], whole: bool = True) -> Adopted:
    """Copy into ``journal`` what the ``sources`` (results files or journals) finished for ``keys``
    that it has not: cells when ``whole``, else (and for unfinished cells) their parts."""
    readers = [Journal.read_only(source_journal(s)) for s in sources]
    cells = parts = 0
    for key in dict.fromkeys(keys):
        if journal.finished(key) is not None:
            continue
        done = next(filter(None, (r.finished(key) for r in readers)), None)
        if whole and done is not None:
            journal.record_cell(key, done)
            cells += 1
            continue
        have = journal.parts.get(key, {})
        for part, data in _parts_in(readers, key).items():
            if part not in have:
                journal.record_part(key, part, data)
                parts += 1
    return Adopted(cells, parts)


def _parts_in(readers: Sequence[Journal], key: str) -> dict[str, dict]:
    """Every part the sources hold for ``key``: part lines, and the parts inside partial cells."""
    found: dict[str, dict] = {}
    for reader in readers:
        cell = reader.cells.get(key)
        if cell is not None and cell.status == "partial":
            found.update({str(i): dict(d) for i, d in cell.detail.get("parts", {}).items()})
        found.update(reader.parts.get(key, {}))
    return found
