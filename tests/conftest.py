"""Shared fixtures: tiny random models with real tokenizers, built in the test (no downloads)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tiny_models import make_tiny_llama, tiny_corpus_text  # noqa: E402

from coca_eval.models.registration import register_model_types  # noqa: E402

register_model_types()  # tests load CoCA checkpoints with transformers' Auto classes directly


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Journals and caches of one test never leak into another (real-model assets keep their cache)."""
    if "COCA_EVAL_CACHE_KEEP" not in os.environ:
        monkeypatch.setenv("COCA_EVAL_JOURNAL_DIR", str(tmp_path_factory.mktemp("journals")))


@pytest.fixture(scope="session")
def tiny_llama_dir(tmp_path_factory) -> Path:
    """LLaMA-style model whose tokenizer adds no BOS (like SmolLM2)."""
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama"), add_bos=False)


@pytest.fixture(scope="session")
def tiny_llama_bos_dir(tmp_path_factory) -> Path:
    """LLaMA-style model whose tokenizer adds BOS (like LLaMA and Gemma)."""
    return make_tiny_llama(tmp_path_factory.mktemp("tiny-llama-bos"), add_bos=True)


@pytest.fixture(scope="session")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "books.jsonl"
    import json

    texts = tiny_corpus_text()
    path.write_text("".join(json.dumps({"text": t, "title": f"doc{i}"}) + "\n" for i, t in enumerate(texts)))
    return path
