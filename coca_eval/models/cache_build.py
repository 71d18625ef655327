"""Build a cached directory (a converted model) once, however many runs ask for it at the same time.

The directory is built in a temp dir beside its place and renamed in, so no run ever sees half of one.
Two runs building the same directory used to race: the later one deleted the finished copy the earlier
one was already loading, to rename its own in. Now one run builds while the others wait on a lock
beside the directory, then find it current and use it. Only a stale copy is ever replaced, under the
lock and by a rename out of the way (never deleted in place), and a stale copy is never handed out.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from coca_eval.errors import CocaEvalError


def build_once(
    out: Path,
    is_current: Callable[[Path], bool],
    build: Callable[[Path, Path], None],
    on_wait: Callable[[], None] | None = None,
) -> Path:
    """``out`` once ``is_current(out)``, calling ``build(dest, scratch)`` first if no run has yet.

    ``build`` writes the whole directory to ``dest``; ``scratch`` is a temp dir on the same filesystem
    for anything it needs on the way. ``on_wait`` is called once if another run is building ``out``.
    """
    if is_current(out):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(out.parent / f".{out.name}.lock", on_wait):
        if is_current(out):  # another run built it while this one waited
            return out
        with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}-") as tmp:
            built = Path(tmp) / "built"
            build(built, Path(tmp))
            _swap_in(built, out, Path(tmp) / "stale")
    return out


def _swap_in(built: Path, out: Path, aside: Path) -> None:
    """A stale ``out`` leaves in one rename (and goes with the temp dir), then ``built`` takes its place."""
    if out.exists():
        os.replace(out, aside)
    os.replace(built, out)


@contextmanager
def _exclusive(lock_path: Path, on_wait: Callable[[], None] | None) -> Iterator[None]:
    """An exclusive ``flock`` (dropped by the kernel if the process dies, so it is never stale)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise CocaEvalError(f"cannot lock {lock_path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
