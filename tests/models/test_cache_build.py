"""Item 7: runs converting the same GGUF preset at once. The later one used to delete the copy the
earlier one was loading; now one converts, the others wait and use its copy, and none sees half of one."""

from __future__ import annotations

import json
import threading
import time

import pytest
from test_model_presets import fake_source

from coca_eval.models import gguf
from coca_eval.models.cache_build import build_once
from coca_eval.models.gguf import CONVERSION_FORMAT, materialize_gguf

WEIGHTS = b"w" * 4096


def _slow_convert(calls: list, started: threading.Event):
    """Stands in for the 15-45 s dequantisation: slow, and it writes its file in pieces."""

    def convert(gguf_path, out, src):
        calls.append(out)
        started.set()
        out.mkdir(parents=True)
        with open(out / "model.safetensors", "wb") as fh:
            for start in range(0, len(WEIGHTS), 1024):
                fh.write(WEIGHTS[start : start + 1024])
                fh.flush()
                time.sleep(0.1)

    return convert


def _in_thread(target, results: dict, name: str) -> threading.Thread:
    def run():
        try:
            results[name] = target()
        except BaseException as exc:  # reported by the assertion on results
            results[name] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_two_runs_converting_at_once_convert_once_and_share_a_whole_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    src = fake_source(tmp_path, [b"gguf bytes"])
    calls, started, results = [], threading.Event(), {}
    monkeypatch.setattr(gguf, "_convert", _slow_convert(calls, started))
    first = _in_thread(lambda: materialize_gguf(src), results, "first")
    assert started.wait(30)
    second = _in_thread(lambda: materialize_gguf(src), results, "second")  # asks while the first converts
    first.join(30)
    out = results["first"]
    reads = []
    while second.is_alive():  # the first run loads its copy while the second is still deciding
        reads.append((out / "model.safetensors").read_bytes())
    second.join()
    assert results["second"] == out and len(calls) == 1  # the second waited and used the first's copy
    assert set(reads) <= {WEIGHTS} and (out / "model.safetensors").read_bytes() == WEIGHTS
    assert json.loads((out / "provenance.json").read_text())["format"] == CONVERSION_FORMAT
    assert sorted(p.name for p in out.parent.iterdir()) == [".fake.lock", "fake"]  # no temp dir left


def test_the_waiting_run_is_told_once(tmp_path):
    out, notices, results = tmp_path / "model", [], {}
    release = threading.Event()

    def slow_build(dest, scratch):
        dest.mkdir()
        release.wait(30)
        (dest / "done").write_text("1")

    def is_current(path):
        return (path / "done").is_file()

    first = _in_thread(lambda: build_once(out, is_current, slow_build), results, "first")
    while not (tmp_path / ".model.lock").exists():
        time.sleep(0.01)
    time.sleep(0.2)  # the first holds the lock now
    second = _in_thread(
        lambda: build_once(out, is_current, pytest.fail, lambda: notices.append(1)), results, "second"
    )
    while not notices:
        time.sleep(0.01)
    release.set()
    first.join(30)
    second.join(30)
    assert results == {"first": out, "second": out} and notices == [1]


def test_a_stale_copy_is_replaced_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path))
    src = fake_source(tmp_path, [b"gguf bytes"])
    out = tmp_path / "models" / "fake"
    out.mkdir(parents=True)
    (out / "provenance.json").write_text(json.dumps({"format": CONVERSION_FORMAT - 1}))
    (out / "old-weights.bin").write_bytes(b"old")
    monkeypatch.setattr(gguf, "_convert", _slow_convert([], threading.Event()))
    assert materialize_gguf(src) == out
    assert sorted(p.name for p in out.iterdir()) == ["model.safetensors", "provenance.json"]
    assert sorted(p.name for p in out.parent.iterdir()) == [".fake.lock", "fake"]


def test_a_failed_build_leaves_the_stale_copy_and_no_temp_dir(tmp_path):
    out = tmp_path / "model"
    out.mkdir()
    (out / "old").write_text("stale")

    def failing_build(dest, scratch):
        dest.mkdir()
        raise RuntimeError("conversion failed")

    with pytest.raises(RuntimeError):
        build_once(out, lambda path: False, failing_build)
    assert (out / "old").read_text() == "stale"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".model.lock", "model"]
