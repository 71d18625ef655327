"""The fast-path order: probes run in FAST_PATHS order with every fast path off, and a path whose
prerequisite was refused is neither probed nor chosen."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coca_eval.backends import probes
from coca_eval.backends.hf import load_hf_backend
from coca_eval.methods import make_method
from tests.tiny_models import make_tiny_gemma3


@pytest.fixture(scope="module")
def gemma3_dir(tmp_path_factory):
    return make_tiny_gemma3(tmp_path_factory.mktemp("gemma3") / "tiny-gemma3")


def _recording(monkeypatch, outcomes: dict[str, bool]) -> list[tuple[str, frozenset[str]]]:
    """Replace every probe by one that records (its name, the backend's fast paths while it ran)."""
    calls: list[tuple[str, frozenset[str]]] = []

    def probe_for(name):
        def probe(backend):
            calls.append((name, backend.fast_paths))
            return outcomes[name]

        return probe

    paths = tuple(replace(path, probe=probe_for(path.name)) for path in probes.FAST_PATHS)
    monkeypatch.setattr(probes, "FAST_PATHS", paths)
    return calls


def test_real_probes_choose_every_path_on_a_sliding_window_model(gemma3_dir):
    backend = load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    assert backend.fast_paths == {probes.SPLIT_HEAD, probes.TAIL_ROWS, probes.BANDED}


def test_probes_run_in_order_on_the_plain_path(gemma3_dir, monkeypatch):
    calls = _recording(monkeypatch, {probes.SPLIT_HEAD: True, probes.TAIL_ROWS: False, probes.BANDED: True})
    backend = load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    assert [name for name, _ in calls] == [probes.SPLIT_HEAD, probes.TAIL_ROWS, probes.BANDED]
    assert all(active == frozenset() for _, active in calls)
    assert backend.fast_paths == {probes.SPLIT_HEAD, probes.BANDED}


def test_a_refused_prerequisite_skips_the_paths_built_on_it(gemma3_dir, monkeypatch):
    calls = _recording(monkeypatch, {probes.SPLIT_HEAD: False, probes.TAIL_ROWS: True, probes.BANDED: True})
    backend = load_hf_backend(make_method(str(gemma3_dir), "none", None, "float32", "hf"))
    assert [name for name, _ in calls] == [probes.SPLIT_HEAD]
    assert backend.fast_paths == frozenset()
