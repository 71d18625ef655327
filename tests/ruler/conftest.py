"""Tokenizers the RULER prompt tests run on, each loaded once per session.

``zoo`` is the miniature zoo's byte-level BPE (committed with its checkpoints, digits one per token);
``smollm2`` and ``gemma3`` are the real tokenizers of the offline presets, read out of their pinned GGUF
files (49k and 262k vocabularies; SmolLM2 has a chat template and no BOS, Gemma 3 adds ``<bos>``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import coca_eval

ZOO_CHECKPOINT = Path(coca_eval.__file__).parent / "zoo" / "checkpoints" / "zoo-rope"

# A Gemma-style turn format for the Gemma 3 base model, whose tokenizer ships no chat template.
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{{ m['content'] }}<end_of_turn>\n{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def _load(name: str):
    from transformers import AutoTokenizer

    if name == "zoo":
        return AutoTokenizer.from_pretrained(ZOO_CHECKPOINT)
    from coca_eval.models.gguf import materialize_tokenizer
    from coca_eval.models.presets import GEMMA3_270M, SMOLLM2_135M

    return AutoTokenizer.from_pretrained(
        materialize_tokenizer({"smollm2": SMOLLM2_135M, "gemma3": GEMMA3_270M}[name])
    )


_CACHE: dict[str, object] = {}


@pytest.fixture(scope="session")
def ruler_tokenizer():
    """``ruler_tokenizer(name)``: the named tokenizer, loaded on first use and kept for the session."""

    def get(name: str):
        if name not in _CACHE:
            _CACHE[name] = _load(name)
        return _CACHE[name]

    return get


# A plain turn format for the zoo's tokenizer, which has no chat tokens.
SIMPLE_TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)


@pytest.fixture(scope="session")
def chat_templates(tmp_path_factory) -> dict[str, Path]:
    """Template files by name: ``gemma`` and ``simple``."""
    folder = tmp_path_factory.mktemp("chat")
    paths = {"gemma": folder / "gemma.jinja", "simple": folder / "simple.jinja"}
    paths["gemma"].write_text(GEMMA_TEMPLATE, encoding="utf-8")
    paths["simple"].write_text(SIMPLE_TEMPLATE, encoding="utf-8")
    return paths


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("zoo", id="zoo"),
        pytest.param("smollm2", id="smollm2", marks=pytest.mark.realmodel),
        pytest.param("gemma3", id="gemma3", marks=pytest.mark.realmodel),
    ],
)
def tokenizer_name(request) -> str:
    """Each of the three tokenizers in turn (the real ones need the offline GGUF assets)."""
    return request.param


@pytest.fixture(scope="session")
def qa_dir(tmp_path_factory) -> Path:
    """A directory with a small SQuAD v2 dev file and a small HotpotQA dev file (their own formats)."""
    from qa_files import write_qa_dir

    return write_qa_dir(tmp_path_factory.mktemp("qa"))


@pytest.fixture
def scripted(monkeypatch):
    """The ``scripted`` backend (``tests/ruler/scripted_backend.py``) registered, answering the planted
    values, never failing: the tests that run whole RULER cells without a model use it."""
    from coca_eval.backends.registry import BACKENDS, BackendEntry
    from tests.ruler import scripted_backend

    if "scripted" not in BACKENDS:
        BACKENDS.add("scripted", BackendEntry("tests.ruler.scripted_backend:load", "answers from the prompt"))
    scripted_backend.record_planted(monkeypatch)
    monkeypatch.setitem(scripted_backend.MODE, "answer", "planted")
    monkeypatch.setitem(scripted_backend.MODE, "fail_after", None)
    monkeypatch.setitem(scripted_backend.MODE, "answered", 0)
