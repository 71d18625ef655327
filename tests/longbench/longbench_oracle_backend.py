"""A backend double that answers the smoke set's questions from the prompt's own text, none of the
family's code involved: the planted code word where the prompt still holds it (in the Chinese rows'
form there), ``Location`` for the classification rows, ``6`` for the count, ``Paragraph 3`` for the
retrieval and the code's next line; then a second line, which the few-shot tasks must not score. A
LongBench v2 question gets the letter of the choice that is the planted code word, in v2's answer form
(no letter when the prompt does not hold the word)."""

from __future__ import annotations

import re

from tests.generation.digest_backend import AnsweringBackend

CODE_WORD = re.compile(r"The keeper's code word is (\w+)\.")
CHINESE = re.compile(r"守门人的暗号是(\w+?)。")
CHOICE = re.compile(r"^\(([A-D])\) (\w+)$", re.MULTILINE)


def choice_text(prompt: str) -> str:
    word = CODE_WORD.search(prompt)
    letters = {text: letter for letter, text in CHOICE.findall(prompt)}
    if word is None or word[1] not in letters:
        return "I cannot tell from the text."
    return f"The correct answer is ({letters[word[1]]})"


def answer_text(prompt: str) -> str:
    if "What is the correct answer to this question" in prompt:
        return choice_text(prompt)
    if "determine the type of the question" in prompt or "判断给定新闻的类别" in prompt:
        return "Location"
    if "how many non-repeating paragraphs" in prompt:
        return "6"
    if "Please enter the number of the paragraph" in prompt or "请输入摘要所属段落的编号" in prompt:
        return "段落3" if "段落" in prompt else "Paragraph 3"
    if "Next line of code" in prompt:
        return "    return value + 1"
    chinese, english = CHINESE.search(prompt), CODE_WORD.search(prompt)
    if chinese:
        return f"暗号是{chinese[1]}"
    return english[1] if english else "unknown"


SEEN: list[list[int]] = []  # every prompt the oracle was given, in order (tests read it)


def reasoning_text(prompt: str) -> str:
    """To LongBench v2's chain-of-thought prompt, a reasoning quoting the planted sentence, with white
    space around it that the family must strip (the same reply the v2 prompt script's stub gives)."""
    found = re.search(r"The keeper's code word is \w+\.", prompt)
    return f"  {found[0] if found else 'I cannot tell.'}\n"


class LongBenchOracle(AnsweringBackend):
    fingerprint = "longbench-oracle"

    def answer(self, prompt) -> list[int]:
        SEEN.append(list(prompt))
        text = self.tokenizer.decode(list(prompt), skip_special_tokens=True)
        if "Let’s think step by step:" in text and "Based on the above" not in text:  # framed or not
            return self.tokenizer(reasoning_text(text), add_special_tokens=False).input_ids
        reply = answer_text(text) + "\nDialogue: and more"
        return self.tokenizer(reply, add_special_tokens=False).input_ids + [self.tokenizer.eos_token_id]


load = LongBenchOracle.load


def register() -> None:
    from coca_eval.backends.registry import BACKENDS, BackendEntry

    if "longbench-oracle" not in BACKENDS:
        entry = BackendEntry("tests.longbench.longbench_oracle_backend:load", "answers the smoke set")
        BACKENDS.add("longbench-oracle", entry)
