"""``VllmBackend.reserve``: a task that learns its longest prompt only after tokenising (BABILong's
prepared rows) grows vLLM's max_model_len before the engine starts; a --max-model-len too small or an
engine already started is one line. The logic alone, without vLLM (the engine is never started here)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from coca_eval.backends.vllm import VllmBackend
from coca_eval.errors import CocaEvalError


def _backend(max_model_len: int, given: int | None = None, started: bool = False) -> VllmBackend:
    backend = VllmBackend.__new__(VllmBackend)
    backend.method = SimpleNamespace(label="tiny vllm")
    backend.options = SimpleNamespace(max_model_len=given)
    backend.max_model_len, backend._llm = max_model_len, object() if started else None
    backend.metadata = {"max_model_len": max_model_len}
    return backend


def test_a_longer_need_grows_max_model_len_before_the_engine_starts():
    backend = _backend(1026)
    backend.reserve(1334)
    assert backend.max_model_len == backend.metadata["max_model_len"] == 1335
    backend.reserve(900)  # a shorter need changes nothing
    assert backend.max_model_len == 1335


@pytest.mark.parametrize(("given", "started"), [(1026, False), (None, True)])
def test_a_given_or_started_length_too_small_is_one_line(given, started):
    backend = _backend(1026, given, started)
    with pytest.raises(
        CocaEvalError, match="needs 1335 positions but vLLM's max_model_len is 1026; give --max"
    ):
        backend.reserve(1334)
