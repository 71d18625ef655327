"""Build the prompts of the LongBench v2 smoke set with LongBench v2's own ``pred.py`` and print, as
JSON, each prompt's token count and the sha256 of its token ids, for tests/longbench's prompt-parity
test.

Run outside this project against a checkout of THUDM/LongBench (an export of its files will do) in an
environment with ``torch`` and ``transformers``. ``pred.py``'s ``get_pred`` runs as written, with its
model path and ``max_len`` set for the tokenizer given and its chat client replaced by one that records
the messages it is sent and answers one letter (``openai``, ``tiktoken`` and ``datasets`` are stubbed:
the prompt, its template, its middle cut and its decoding are all ``pred.py``'s). The ids the model
then sees are made as vLLM's chat endpoint makes them: the tokenizer's chat template (or the one
given) applied to the messages with the assistant's turn opened, tokenised without adding special
tokens; ``plain`` ids are the message's text tokenised as a completion prompt (special tokens added):

    python scripts/longbench_v2_prompt_ids.py LONGBENCH_DIR TOKENIZER_DIR [CHAT_TEMPLATE.jinja] \\
        > tests/longbench/data/v2_prompt_ids_zoo.json
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import types
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "coca_eval" / "longbench" / "smoke" / "v2" / "data.json"
MAX_LENGTHS = (1001, 3000)  # an odd one: pred.py keeps max_len // 2 first and -max_len // 2 last
VARIANTS = {
    "document": {"no_context": False, "cot": False},
    "none": {"no_context": True, "cot": False},
    "cot": {"no_context": False, "cot": True},
}
CODE_WORD = re.compile(r"The keeper's code word is \w+\.")


def reply(prompt: str) -> str:
    """The stub's answer: to a chain-of-thought prompt, a reasoning quoting the planted sentence (with
    the white space pred.py strips); to any other, a letter."""
    if prompt.endswith("Let’s think step by step:"):
        found = CODE_WORD.search(prompt)
        return f"  {found[0] if found else 'I cannot tell.'}\n"
    return "The correct answer is (A)"


class RecordingClient:
    """Stands in for the OpenAI client: keeps each request's messages, answers as :func:`reply`."""

    def __init__(self, **_) -> None:
        self.sent: list[list[dict]] = []
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self._create))

    def _create(self, messages, **_):
        self.sent.append(messages)
        message = types.SimpleNamespace(content=reply(messages[0]["content"]))
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


def load_pred(longbench: Path):
    """v2's ``pred.py`` as a module (its config files are read from its folder at import)."""
    for name in ("openai", "tiktoken", "datasets"):
        sys.modules.setdefault(name, types.SimpleNamespace(OpenAI=None, load_dataset=None))
    os.chdir(longbench)
    sys.path.insert(0, str(longbench))
    import pred

    pred.tqdm = lambda rows: rows
    return pred


def sent_messages(pred, tokenizer_dir: str, rows: list[dict], max_len: int, no_context: bool, cot: bool):
    """Each row's requests in order: one, or two under ``cot`` (the reasoning, then the answer)."""
    client = RecordingClient()
    pred.OpenAI = lambda **_: client
    pred.model_map, pred.maxlen_map = {"coca": tokenizer_dir}, {"coca": max_len}
    args = types.SimpleNamespace(model="coca", rag=0, no_context=no_context, cot=cot)
    with tempfile.TemporaryFile("w+") as out:
        pred.get_pred([dict(row) for row in rows], args, out)
    calls = 2 if cot else 1
    return [client.sent[k : k + calls] for k in range(0, len(client.sent), calls)]


def digest(ids: list[int]) -> dict:
    return {"tokens": len(ids), "sha256": hashlib.sha256(json.dumps(ids).encode()).hexdigest()}


def main() -> None:
    from transformers import AutoTokenizer

    longbench, tokenizer_dir = Path(sys.argv[1]).resolve(), str(Path(sys.argv[2]).resolve())
    chat = Path(sys.argv[3]).read_text() if len(sys.argv) > 3 else None
    rows = json.loads(DATA.read_text(encoding="utf-8"))
    commit = (longbench / "COMMIT").read_text().strip() if (longbench / "COMMIT").exists() else "unknown"
    pred = load_pred(longbench)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    records = []
    for context, flags in VARIANTS.items():
        for max_len in MAX_LENGTHS:
            sent = sent_messages(pred, tokenizer_dir, rows, max_len, **flags)
            for row, calls in zip(rows, sent, strict=True):
                for call, messages in enumerate(calls):
                    framed = tokenizer.apply_chat_template(
                        messages, chat_template=chat, add_generation_prompt=True, tokenize=False
                    )
                    records.append({
                        "_id": row["_id"], "context": context, "max_len": max_len, "call": call,
                        "chat": digest(tokenizer(framed, add_special_tokens=False).input_ids),
                        "plain": digest(tokenizer(messages[0]["content"]).input_ids),
                    })  # fmt: skip
    print(json.dumps({"longbench_commit": commit, "prompts": records}, indent=1))


if __name__ == "__main__":
    main()
