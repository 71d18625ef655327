"""One member out of a hub dataset's archive: matched by a shell pattern (a leading ``./`` ignored),
written only at the path this project chooses, whole or not at all; an archive out of reach is one line."""

from __future__ import annotations

import pytest
from archive_files import write_tar

from coca_eval.data.hub_archive import fetch_archive, unpack_member
from coca_eval.errors import CocaEvalError


def test_the_first_match_is_written_where_asked_and_nowhere_else(tmp_path):
    archive = write_tar(
        tmp_path / "a.tar.gz",
        {"./tasks/en/qa10_x_test.txt": b"ten", "./tasks/en/qa1_x_test.txt": b"one", "../evil.txt": b"no"},
    )
    target = tmp_path / "cache" / "qa1.txt"
    assert unpack_member(archive, "tasks/en/qa1_*_test.txt", target)
    assert target.read_bytes() == b"one"
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["qa1.txt"]  # no partial file left
    assert unpack_member(archive, "../evil.txt", tmp_path / "cache" / "kept.txt")  # named by us, not it
    assert not (tmp_path / "evil.txt").exists() and (tmp_path / "cache" / "kept.txt").read_bytes() == b"no"
    assert not unpack_member(archive, "tasks/en/qa2_*", tmp_path / "cache" / "qa2.txt")
    assert not (tmp_path / "cache" / "qa2.txt").exists()


def test_an_archive_out_of_reach_is_one_line(monkeypatch):
    def offline(*args, **kwargs):
        raise ConnectionError("offline")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", offline)
    with pytest.raises(CocaEvalError, match=r"^cannot fetch x \(ConnectionError\)$"):
        fetch_archive("owner/name", "x.tar.gz", "cannot fetch x ({reason})")
