"""The RULER tests' tokenizers, chat templates and scripted backend serve BABILong's tests (its prompts
are built by RULER's builder)."""

import pytest

from tests.ruler.conftest import chat_templates, ruler_tokenizer, scripted, tokenizer_name  # noqa: F401


@pytest.fixture(autouse=True)
def babilong_planted(monkeypatch):
    """Every BABILong prompt built (either source) is known to the scripted backend with its answer."""
    from coca_eval.babilong.builder import BabilongPromptBuilder
    from tests.ruler.scripted_backend import PLANTED

    build = BabilongPromptBuilder.build

    def recording(self, task, length, samples, seed, prompt_length):
        built = build(self, task, length, samples, seed, prompt_length)
        PLANTED.update({tuple(s.ids): s.answers for s in built})
        return built

    monkeypatch.setattr(BabilongPromptBuilder, "build", recording)
