"""The thinking double registered as the ``thinking`` backend, and a chat template of our own that
takes ``enable_thinking`` (thinking by default, as Qwen3's)."""

from __future__ import annotations

import pytest

THINKING_TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)
PLAIN_TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)


@pytest.fixture
def thinking_model(monkeypatch, tmp_path):
    """The ``thinking`` backend registered, planted prompts recorded; the two templates' paths."""
    from coca_eval.backends.registry import BACKENDS, BackendEntry
    from tests.ruler import scripted_backend
    from tests.thinking import thinking_backend

    if "thinking" not in BACKENDS:
        BACKENDS.add("thinking", BackendEntry("tests.thinking.thinking_backend:load", "thinks, then answers"))
    scripted_backend.PLANTED.clear()
    scripted_backend.record_planted(monkeypatch)
    thinking_backend.CALLS.clear()
    (tmp_path / "thinking.jinja").write_text(THINKING_TEMPLATE)
    (tmp_path / "plain.jinja").write_text(PLAIN_TEMPLATE)
    return {"thinking": str(tmp_path / "thinking.jinja"), "plain": str(tmp_path / "plain.jinja")}
