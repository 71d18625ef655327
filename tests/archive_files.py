"""Small archives built in a test: a gzipped tar of named members, as sdists and hub archives are."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path


def write_tar(path: Path, members: dict[str, bytes]) -> Path:
    """``path`` as a ``.tar.gz`` holding each ``name -> bytes`` as a regular file, in the given order."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
