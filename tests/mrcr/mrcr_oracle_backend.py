"""A backend double that answers MRCR prompts right, worked out from the prompt's own text: it splits
the rendered conversation on its role lines (the test template's, or the plain transcript's), reads
the final request (this project's wording or OpenAI's), finds the requests for that form and topic
and repeats the wanted one's answer behind the random string, none of the family's code involved. A
run on it scores 100 exactly when every reference is the wanted turn's text. ``WRONG`` holds the
tasks it answers with the next needle's answer instead (the first's when the last is wanted)."""

from __future__ import annotations

import re

from tests.generation.digest_backend import AnsweringBackend

WRONG: set[str] = set()
TEMPLATE = (
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)
OURS = re.compile(
    r"Repeat word for word the (\d+)\w\w (.+) about (.+) that you wrote .* reply with (\S+) and"
)
OPENAIS = re.compile(r"Prepend (\S+) to the (\d+)\w\w \(1 indexed\) (.+) about (.+)\. Do not include")


def messages(prompt: str) -> list[tuple[str, str]]:
    """(role, content) of every message, from the test template's ``### role:`` lines or a plain
    transcript's ``User:`` / ``Assistant:`` lines (a blank line after each message)."""
    parts = re.split(r"(?:^|\n)(?:### )?(user|assistant|system|User|Assistant|System)(?: \d+)?:\n", prompt)
    pairs = list(zip(parts[1::2], parts[2::2], strict=True))
    return [(role.lower(), text.removesuffix("\n")) for role, text in pairs if text]


def wanted(prompt: str) -> tuple[str, list[str], int]:
    """The random string, the answers of the wanted form and topic in order, and which is wanted."""
    turns = messages(prompt)
    final = turns[-1][1]
    ours, theirs = OURS.search(final), OPENAIS.search(final)
    if ours:
        number, form, topic, prefix = int(ours[1]), ours[2], ours[3], ours[4]
    else:
        prefix, number, form, topic = theirs[1], int(theirs[2]), theirs[3], theirs[4]
    asked = re.compile(rf"\b(?:a|an) {re.escape(form)} about {re.escape(topic)}\b", re.IGNORECASE)
    answers = [
        turns[i + 1][1]
        for i, (role, text) in enumerate(turns[:-1])
        if role == "user" and asked.search(text) and turns[i + 1][0] == "assistant"
    ]
    return prefix, answers, number


class MrcrOracle(AnsweringBackend):
    fingerprint = "mrcr-oracle"

    def answer(self, prompt) -> list[int]:
        text = self.tokenizer.decode(list(prompt), skip_special_tokens=True)
        prefix, answers, number = wanted(text)
        task = f"{len(answers)}needle"
        chosen = answers[number % len(answers)] if task in WRONG else answers[number - 1]
        return self.tokenizer(prefix + chosen, add_special_tokens=False).input_ids + [self.eos]

    @property
    def eos(self) -> int:
        return self.tokenizer.eos_token_id


load = MrcrOracle.load


def register() -> None:
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "mrcr-oracle" not in BACKENDS:
        BACKENDS.add("mrcr-oracle", BackendEntry("tests.mrcr.mrcr_oracle_backend:load", "answers right"))
