"""Append-only JSONL journal of finished work, so a rerun after a crash or Ctrl-C recomputes nothing.

Two kinds of lines: ``cell`` (a finished :class:`Cell`) and ``part`` (a finished piece of a cell, such
as one document's NLL sum, so that even a long cell resumes where it stopped). Every line carries the
cell key: a hash of everything that changes a number, so a changed option never reuses a stale value.

A crash can cut the last line short; that line is dropped on load (its work is simply redone). A last
line that is whole but lacks its newline is kept and ended before the next append. Any other
unreadable line is skipped with a warning: it loses only its own work, never the rest of the journal
(every entry carries its cell key, so a skipped or stale line can never lend a wrong value).

One run at a time: appending truncates a cut-off tail back to the size this process last saw, so two
runs sharing a journal (the same ``--output``, or two identical runs without it, which share the cache
journal) would erase each other's parts. A run holds an exclusive ``flock`` on ``<journal>.lock`` from
loading to :meth:`Journal.close` (the kernel drops it when the process dies, so a killed run never
leaves a stale lock), and a second run is refused with one line naming the holder, or, asked to wait
(``--wait``), says once whom it waits for and blocks until the holder is done. It then loads what the
holder journaled, so it recomputes nothing the holder finished.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell
from coca_eval.taskspec import cell_in_points

JOURNAL_VERSION = 1
_BAD_LINE = (ValueError, KeyError, TypeError, ValidationError)  # json, shape and record errors


def cell_key(identity: dict[str, Any]) -> str:
    """Stable hash of a cell's identity (method spec, weights, task params, length, code version)."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _holder(fd: int, patience: float = 2.0) -> str:
    """What the lock's holder wrote into the lock file (its pid, host and start). The holder writes
    its line just after taking the lock, so an empty file is read again for a moment before the
    message settles for naming no one."""
    deadline = time.monotonic() + patience
    while True:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        if text or time.monotonic() >= deadline:
            return text or "another process"
        time.sleep(0.01)


def exclusive_lock(
    lock_path: Path, name: str, doing: str, wait: bool, on_wait: Callable[[str], None] | None
) -> int:
    """Take an exclusive ``flock`` on ``lock_path`` and write who holds it; the descriptor comes back
    (closing it releases the lock, as the kernel does when the process dies). A busy lock is refused
    in one line naming the holder (``{name} is {doing} by another coca-eval run``), or with ``wait``
    reported once through ``on_wait`` and waited for."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise CocaEvalError(f"cannot lock {name}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        in_use = f"{name} is {doing} by another coca-eval run ({_holder(fd)})"
        if not wait:
            os.close(fd)
            advice = "wait for it to finish (or give --wait) or give another --output"
            raise CocaEvalError(f"{in_use}; {advice}") from None
        if on_wait is not None:
            on_wait(f"{in_use}; waiting for it to finish")
        fcntl.flock(fd, fcntl.LOCK_EX)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    os.ftruncate(fd, 0)
    # at offset 0: a waiter's read of the holder's line moved its file offset
    os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}\n".encode(), 0)
    return fd


def release_lock(fd: int) -> None:
    """Empty the lock file, then close it (which drops the flock): a run that meets the lock while
    the next holder is taking it reads no stale name of a run that has already ended."""
    os.ftruncate(fd, 0)
    os.close(fd)


class Journal:
    """Finished cells and parts, loaded from ``path`` and appended to as work completes."""

    def __init__(
        self, path: Path, wait: bool = False, on_wait: Callable[[str], None] | None = None, lock: bool = True
    ) -> None:
        self.path = Path(path)
        self.cells: dict[str, Cell] = {}
        self.parts: dict[str, dict[str, dict[str, Any]]] = {}
        self._good_size = 0
        self._needs_newline = False
        self._lock_fd: int | None = None
        self.warnings: list[str] = []  # skipped lines, for the run to show
        self._read_only = not lock
        if lock:
            self._lock(wait, on_wait)
        try:
            if self.path.exists():
                self._load()
        except BaseException:
            self.close()
            raise

    @classmethod
    def read_only(cls, path: Path) -> Journal:
        """Another run's journal, loaded without its lock and never appended to: reading is safe while
        that run goes on (a line it is still writing is a cut tail, dropped like a crash's)."""
        return cls(path, lock=False)

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    def _lock(self, wait: bool, on_wait: Callable[[str], None] | None) -> None:
        """Take the run's exclusive lock (see :func:`exclusive_lock`)."""
        self._lock_fd = exclusive_lock(self.lock_path, f"journal {self.path}", "in use", wait, on_wait)

    def close(self) -> None:
        """Release the lock (closing the descriptor drops the flock); the journal stays readable."""
        if self._lock_fd is not None:
            release_lock(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise CocaEvalError(f"cannot read journal {self.path}: {exc.strerror}") from None
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]
        for number, line in enumerate(complete, start=1):
            if line.strip():
                self._apply_or_skip(line, number)
        self._good_size = len(data) - len(tail)
        if tail.strip():  # a crash cut this line short: forget it, its work is redone
            try:
                self._apply(tail)
            except _BAD_LINE:
                return
            self._good_size = len(data)  # whole but unterminated: keep it, end it before appending
            self._needs_newline = True

    def _apply_or_skip(self, line: bytes, number: int) -> None:
        """A damaged line loses only its own work: the keys already keep stale entries out."""
        try:
            self._apply(line)
        except _BAD_LINE as exc:
            reason = str(exc).splitlines()[0][:120]
            self.warnings.append(f"journal {self.path}: skipped unreadable line {number} ({reason})")

    def _apply(self, line: bytes) -> None:
        entry = json.loads(line)
        kind, key = entry["kind"], entry["key"]
        if entry.get("v") != JOURNAL_VERSION:
            raise ValueError(f"unsupported journal version {entry.get('v')!r}")
        if kind == "cell":
            # a cell journaled before cells stated their unit holds its task's unit then (passkey 0-1)
            self.cells[key] = cell_in_points(Cell.model_validate(entry["cell"]), old=True)
        elif kind == "part":
            self.parts.setdefault(key, {})[str(entry["part"])] = dict(entry["data"])
        else:
            raise ValueError(f"unknown entry kind {kind!r}")

    def _append(self, entry: dict[str, Any]) -> None:
        if self._read_only:
            raise RuntimeError(f"journal {self.path} was opened read-only")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and self.path.stat().st_size != self._good_size:
            os.truncate(self.path, self._good_size)  # drop a cut-off line before appending
        line = (json.dumps({"v": JOURNAL_VERSION, **entry}, allow_nan=False) + "\n").encode()
        if self._needs_newline:  # never glue an entry onto an unterminated last line
            line = b"\n" + line
        try:
            with open(self.path, "ab") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:  # disk full: what is journaled so far stays, the next run resumes from it
            raise CocaEvalError(f"cannot write journal {self.path}: {exc.strerror or exc}") from None
        self._good_size += len(line)
        self._needs_newline = False

    def record_part(self, key: str, part: str, data: dict[str, Any]) -> None:
        self.parts.setdefault(key, {})[part] = data
        self._append({"kind": "part", "key": key, "part": part, "data": data})

    def record_cell(self, key: str, cell: Cell) -> None:
        self.cells[key] = cell
        self._append({"kind": "cell", "key": key, "cell": cell.model_dump(mode="json")})

    def finished(self, key: str) -> Cell | None:
        """The journaled cell for ``key`` if it finished successfully (OOM/error cells are retried)."""
        cell = self.cells.get(key)
        return cell if cell is not None and cell.status in ("ok", "inf") else None
