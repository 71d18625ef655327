"""Reading one member out of a wheel or an sdist, without unpacking the rest."""

from __future__ import annotations

import zipfile

import pytest
from archive_files import write_tar

from coca_eval.archives import read_member
from coca_eval.errors import CocaEvalError


def test_read_member_from_wheel_and_tarball(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/data.bin", b"zip bytes")
    sdist = write_tar(tmp_path / "pkg-1.0.tar.gz", {"pkg-1.0/data.txt": b"tar bytes"})
    assert read_member(wheel, "pkg/data.bin") == b"zip bytes"
    assert read_member(sdist, "pkg-1.0/data.txt") == b"tar bytes"
    for archive in (wheel, sdist):
        with pytest.raises(CocaEvalError, match="not found"):
            read_member(archive, "missing.txt")
