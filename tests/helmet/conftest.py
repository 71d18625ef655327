"""The RULER tests' tokenizers, chat templates and scripted backend serve HELMET's tests too: HELMET's
prompts are built by RULER's builder (``--protocol exact``) or by HELMET's own text and cut
(``--protocol helmet``), whose prompts the scripted backend learns here."""

import pytest

from tests.ruler.conftest import chat_templates, ruler_tokenizer, scripted, tokenizer_name  # noqa: F401


@pytest.fixture(autouse=True)
def helmet_planted(monkeypatch):
    """Every HELMET prompt built is known to the scripted backend with its references."""
    from coca_eval.helmet.prompts import HelmetPromptBuilder
    from tests.ruler.scripted_backend import PLANTED

    build = HelmetPromptBuilder.build

    def recording(self, task, length, samples, seed, prompt_length):
        built = build(self, task, length, samples, seed, prompt_length)
        for sample in built:  # a ranking is answered as the ideal one, best first
            ranking = (" > ".join(a.rsplit(":", 1)[0] for a in sample.answers),)
            PLANTED[tuple(sample.ids)] = ranking if task == "msmarco_rerank_psg" else sample.answers
        return built

    monkeypatch.setattr(HelmetPromptBuilder, "build", recording)
