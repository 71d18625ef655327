"""Reading a peer's published rows from local files, for the families that run a published set as it
is (GraphWalks, MRCR, LongBench): parquet or JSON-lines files, each row a mapping, with one-line
refusals that name the file and the row, and a fingerprint of the files for a run's identity. The
JSON-lines reader (:func:`json_lines`) also reads HELMET's local ICL sets."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from coca_eval.errors import CocaEvalError
from coca_eval.files import read_user_text

Row = TypeVar("Row")


def file_rows(path: Path) -> list[Any]:
    """The rows of a ``.parquet`` file, or of a JSON-lines file (blank lines skipped)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 (pyarrow raises many kinds for a bad file)
            raise CocaEvalError(f"{path}: not a readable parquet file ({exc})") from None
    return json_lines(read_user_text(path), path)


def json_lines(text: str, where: Any, by_line: bool = False) -> list[Any]:
    """The values of JSON-lines ``text`` read from ``where`` (blank lines skipped). A line that is not
    JSON is one line naming ``where`` and its row, counted from 0 as a table's rows are, or with
    ``by_line`` its line, counted from 1 as an editor shows it."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1 if by_line else 0):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                reason = f"line {number}: {exc.msg}" if by_line else f"row {number}: not JSON ({exc.msg})"
                raise CocaEvalError(f"{where} {reason}") from None
    return rows


def require_columns(raw: Any, columns: Sequence[str], where: str) -> None:
    """A row must be a mapping holding every one of ``columns`` (one line naming the first missing)."""
    if not isinstance(raw, dict):
        raise CocaEvalError(f"{where}: not a mapping of {', '.join(columns)}")
    missing = [c for c in columns if c not in raw]
    if missing:
        raise CocaEvalError(f"{where}: missing column {missing[0]}")


def refuse_repeats(rows: Sequence[Row], key: Callable[[Row], str], what: str) -> tuple[Row, ...]:
    """The rows, each ``key`` once: a question held twice would count twice in its cell. Rows name
    themselves by their ``where``."""
    first: dict[str, str] = {}
    for row in rows:
        seen = first.setdefault(key(row), row.where)
        if seen != row.where:
            raise CocaEvalError(f"{row.where}: the same {what} as {seen} (each question counts once)")
    return tuple(rows)


def files_fingerprint(files: Sequence[Path]) -> str:
    """What identifies local rows in a run's identity: each file's name, size and modification time."""
    text = ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files)
    return "files:" + hashlib.sha256(text.encode()).hexdigest()[:16]


@contextmanager
def from_the_hub(hub_id: str, advice: str) -> Iterator[None]:
    """Whatever fails while the hub set ``hub_id`` is fetched (offline, missing, gated) is one line:
    the first line of the reason, then ``advice`` (what to download and pass instead)."""
    try:
        yield
    except CocaEvalError:
        raise
    except Exception as exc:  # noqa: BLE001 (any library's error: one line whatever the cause)
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise CocaEvalError(f"--data hub: {hub_id} could not be downloaded ({reason}); {advice}") from None
