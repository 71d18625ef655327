"""Single files read out of pinned archives (wheels, sdists, .deb packages) without unpacking them.

Only the member asked for is read, into memory: nothing from an archive is ever written to disk or run.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from coca_eval.errors import CocaEvalError


def read_member(archive: Path, member: str) -> bytes:
    """Read one file out of a wheel/zip, a .tar.gz sdist or a .deb without unpacking the rest."""
    name = Path(archive).name
    try:
        if name.endswith(".deb"):
            return _read_deb_member(Path(archive), member)
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


def _read_deb_member(deb: Path, member: str) -> bytes:
    """A .deb is an ``ar`` archive whose ``data.tar.*`` holds the files; read one without dpkg."""
    with tarfile.open(fileobj=io.BytesIO(_ar_member(deb, "data.tar")), mode="r:*") as tf:
        fh = tf.extractfile(member if member.startswith("./") else f"./{member}")
        if fh is None:
            raise KeyError(member)
        return fh.read()


def _ar_member(path: Path, prefix: str) -> bytes:
    """The first member of a Unix ``ar`` archive whose name starts with ``prefix``."""
    data = path.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise CocaEvalError(f"{path.name} is not an ar archive")
    at = 8
    while at + 60 <= len(data):
        header = data[at : at + 60]
        name, size = header[:16].decode().strip().rstrip("/"), int(header[48:58].decode().strip())
        if name.startswith(prefix):
            return data[at + 60 : at + 60 + size]
        at += 60 + size + (size % 2)
    raise KeyError(prefix)
