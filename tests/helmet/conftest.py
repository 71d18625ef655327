"""The RULER tests' tokenizers, chat templates and scripted backend serve HELMET's tests too: HELMET's
prompts are built by RULER's builder."""

from tests.ruler.conftest import chat_templates, ruler_tokenizer, scripted, tokenizer_name  # noqa: F401
