"""The RULER tests' tokenizers and chat templates serve BABILong's prompt tests (its prompts are built by
RULER's builder)."""

from tests.ruler.conftest import chat_templates, ruler_tokenizer, tokenizer_name  # noqa: F401
