"""Pinned PyPI downloads: cache hits, sha256 checks and pip failures, with pip faked (no network)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from archive_files import write_tar

from coca_eval import assets
from coca_eval.assets import (
    PypiFile,
    cache_dir,
    fetch_pypi_file,
    sha256_file,
)
from coca_eval.errors import CocaEvalError

PAYLOAD = b"pinned payload\n"
FILE = PypiFile("demo", "1.0", "demo-1.0.tar.gz", hashlib.sha256(PAYLOAD).hexdigest(), sdist=True)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fake_pip(monkeypatch, content: bytes | None = PAYLOAD, name: str = FILE.filename, stderr: str = ""):
    """Stand in for ``pip download``: write ``content`` as ``name`` into the -d dir, or fail. Each call
    is recorded with the requirement file's text in place of its path."""
    calls: list[list[str]] = []

    def run(cmd, **kwargs):
        requirement = cmd[cmd.index("-r") + 1]
        calls.append([Path(arg).read_text() if arg == requirement else arg for arg in cmd])
        if content is None:
            return subprocess.CompletedProcess(cmd, 1, "", stderr)
        files = Path(cmd[cmd.index("-d") + 1])
        files.mkdir(exist_ok=True)
        (files / name).write_bytes(content)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(assets.subprocess, "run", run)
    return calls


def test_cache_dir_honours_env(cache):
    assert cache_dir() == cache


def test_cache_dir_default_is_per_user(monkeypatch):
    monkeypatch.delenv("COCA_EVAL_CACHE", raising=False)
    assert "coca-eval" in str(cache_dir())


def test_sha256_file_streams_the_whole_file(tmp_path):
    data = b"x" * (3 << 20)
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_download_verifies_and_caches(cache, monkeypatch):
    calls = fake_pip(monkeypatch)
    path = fetch_pypi_file(FILE)
    assert path == cache / "pypi" / FILE.filename and path.read_bytes() == PAYLOAD
    assert "--no-binary" in calls[0] and "--require-hashes" in calls[0]
    assert f"demo==1.0 --hash=sha256:{FILE.sha256}\n" in calls[0]  # pip checks it before unpacking
    assert fetch_pypi_file(FILE) == path and len(calls) == 1  # second call is a cache hit
    assert [p.name for p in path.parent.iterdir()] == [FILE.filename]  # no temp dirs left behind


def test_wheels_ask_pip_for_binaries_only(cache, monkeypatch):
    wheel = PypiFile("demo", "1.0", "demo-1.0-py3-none-any.whl", FILE.sha256)
    calls = fake_pip(monkeypatch, name=wheel.filename)
    fetch_pypi_file(wheel)
    assert "--only-binary" in calls[0] and "--no-binary" not in calls[0]


def test_sha256_mismatch_is_a_user_error_and_caches_nothing(cache, monkeypatch):
    fake_pip(monkeypatch, content=b"tampered")
    with pytest.raises(CocaEvalError, match="sha256"):
        fetch_pypi_file(FILE)
    assert not (cache / "pypi" / FILE.filename).exists()


def test_corrupt_cached_file_is_downloaded_again(cache, monkeypatch):
    (cache / "pypi").mkdir(parents=True)
    (cache / "pypi" / FILE.filename).write_bytes(b"truncated")
    calls = fake_pip(monkeypatch)
    assert fetch_pypi_file(FILE).read_bytes() == PAYLOAD and len(calls) == 1


def test_pip_failure_reports_its_last_error_line(cache, monkeypatch):
    stderr = (
        "WARNING: Location 'file:///x' is ignored\n"
        "ERROR: No matching distribution found for demo==1.0\nWARNING: trailing chatter\n"
    )
    fake_pip(monkeypatch, content=None, stderr=stderr)
    with pytest.raises(CocaEvalError) as err:
        fetch_pypi_file(FILE)
    assert str(err.value).endswith("ERROR: No matching distribution found for demo==1.0")
    assert "\n" not in str(err.value)


def test_unexpected_file_name_from_pip_is_reported(cache, monkeypatch):
    fake_pip(monkeypatch, name="Demo-1.0.tar.gz")
    with pytest.raises(CocaEvalError, match="gave Demo-1.0.tar.gz"):
        fetch_pypi_file(FILE)


BACKEND = """
import pathlib

def _ran(hook):
    with open({marker!r}, "a") as fh:
        fh.write(hook + "\\n")

def get_requires_for_build_wheel(config_settings=None):
    _ran("get_requires_for_build_wheel")
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _ran("prepare_metadata_for_build_wheel")
    info = pathlib.Path(metadata_directory) / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\n")
    return info.name
"""


def _sdist_running_code(folder: Path, marker: Path) -> Path:
    """A ``demo-1.0.tar.gz`` whose in-tree build backend notes in ``marker`` every time pip runs it."""
    pyproject = b'[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    members = {
        "demo-1.0/pyproject.toml": pyproject,
        "demo-1.0/backend.py": BACKEND.format(marker=str(marker)).encode(),
        "demo-1.0/PKG-INFO": b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    return write_tar(folder / "demo-1.0.tar.gz", members)


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """Real pip against a folder of archives instead of PyPI (no network)."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "index"))
    return tmp_path / "index"


def test_a_swapped_sdist_is_refused_before_pip_runs_any_of_its_code(cache, local_index, tmp_path):
    marker = tmp_path / "backend-ran.txt"
    sdist = _sdist_running_code(local_index, marker)
    pinned = PypiFile("demo", "1.0", sdist.name, "0" * 64, sdist=True)  # the pin names other bytes
    with pytest.raises(CocaEvalError) as err:
        fetch_pypi_file(pinned)
    message = str(err.value)
    assert f"has sha256 {sha256_file(sdist)}, expected {'0' * 64}" in message and "\n" not in message
    assert not marker.exists()  # its build backend never ran
    assert list((cache / "pypi").iterdir()) == []  # nothing kept, no temp dir left


def test_the_pinned_sdist_downloads_through_real_pip(cache, local_index, tmp_path):
    sdist = _sdist_running_code(local_index, tmp_path / "backend-ran.txt")
    pinned = PypiFile("demo", "1.0", sdist.name, sha256_file(sdist), sdist=True)
    assert fetch_pypi_file(pinned).read_bytes() == sdist.read_bytes()
