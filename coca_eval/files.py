"""Atomic file writes: no reader ever sees half a results file, report, passkey dump or cached book.

Every whole file coca-eval writes for another reader (a results file the CI gate reads, a report, an
OpenCompass config, a cached book) goes through :func:`write_atomic`, so one implementation decides
the file's mode, its durability and what a failed write looks like to the user. Journals are the
exception: they are appended line by line (:mod:`coca_eval.journal`).

Text files the user hands in (predictions, samples, prepared rows) are read through
:func:`read_user_text`, so a file that is not UTF-8 is one line naming it, never a decoder's traceback.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from coca_eval.errors import CocaEvalError


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write via a temp file in the same directory and rename, so readers never see half a file.

    ``str`` is written as UTF-8. The file gets the mode a plain ``open`` would give (``0666`` less
    the umask; ``mkstemp`` alone makes it ``0600``, unreadable to a CI step or a colleague), and the
    directory is synced after the rename so the new name survives a power loss. Any ``OSError`` (disk
    full, read-only folder, a file where a folder should be) is one line: the journal beside the
    output still holds every finished cell.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise CocaEvalError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_directory(path.parent)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise CocaEvalError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_user_text(path: Path) -> str:
    """A text file the user named, as UTF-8. One saved in another encoding (Latin-1, UTF-16, a binary
    file under a text name) is one line naming the file and the offset of its first undecodable byte, so
    the user knows which file to convert; a file that cannot be read at all is one line too."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CocaEvalError(
            f"{path} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x}); save it as UTF-8"
        ) from None
    except OSError as exc:
        raise CocaEvalError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_utf8(path: Path, where: str) -> str:
    """A settings file the user named (a config, a spec, a methods list), as UTF-8; one that is not is
    one line, ``where`` (how the caller names the file) and the offset of its first undecodable byte.
    Other read failures stay the caller's to word, as each names its own file kind."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CocaEvalError(f"{where} is not UTF-8 text (byte {exc.start})") from None


def _umask() -> int:
    """The process umask (reading it means setting it; set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def copy_side_file(path: Path, source_dir: Path, dest_dir: Path) -> bool:
    """Copy ``path`` (a tokenizer or README beside some weights) into ``dest_dir``; returns whether
    it was copied. A link, or anything resolving outside ``source_dir``, is skipped with a one-line
    warning: a checkpoint from elsewhere with ``README.md -> /etc/shadow`` must not have that file
    copied into an output someone shares."""
    import shutil
    import sys

    path = Path(path)
    if path.is_symlink() or not path.resolve().is_relative_to(Path(source_dir).resolve()):
        print(f"coca-eval: warning: skipped {path}: a link, not a file of {source_dir}", file=sys.stderr)
        return False
    if not path.is_file():
        return False
    shutil.copy2(path, Path(dest_dir) / path.name)
    return True
