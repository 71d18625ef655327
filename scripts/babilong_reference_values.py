"""BABILong's own prompt formatting and answer check, run on this project's frozen cases, printed as JSON.

Run outside this project against a directory holding BABILong's ``prompts.py`` and ``metrics.py`` at one
commit and a ``COMMIT`` file naming it (``git show COMMIT:babilong/prompts.py`` etc. from a clone of
booydar/babilong; both files import nothing, so any Python 3 runs them):

    python scripts/babilong_reference_values.py BABILONG_DIR > tests/babilong/data/babilong_values.json
    python scripts/babilong_reference_values.py BABILONG_DIR --prompts > coca_eval/babilong/prompts.json
    VENV/bin/python scripts/babilong_reference_values.py BABILONG_DIR --prepared \
        > tests/babilong/data/babilong_prepared.json

The first writes the reference the tests hold ``coca_eval.babilong`` to: ``get_formatted_input`` on
every task x every combination of the prompt's parts (instruction, examples, post-prompt present or
left empty, as BABILong's evaluation grid does) for the contexts and questions of
``tests/babilong/data/cases.json``, and ``compare_answers`` with ``TASK_LABELS`` on its frozen outputs.
The second exports BABILong's prompt texts (``DEFAULT_PROMPTS``, ``DEFAULT_TEMPLATE``) and label sets
(``TASK_LABELS``) as the package's data: BABILong's prompts are its protocol, used as they are.
The third (in a venv with ``transformers``) formats the fixture rows of ``tests/babilong/data/prepared``
(the hub sets' layout: ``<length>/<task>.jsonl`` rows of ``input``, ``question``, ``target``) as
BABILong's ``scripts/run_model_on_babilong.py`` does and tokenises them as it does, with the zoo's
tokenizer: ``tokenizer.encode(text, add_special_tokens=True)`` without a chat template, and
``apply_chat_template([user turn], tokenize=True, add_generation_prompt=True)`` with the tests' plain
turn template.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("instruction", "examples", "post_prompt")
ZOO_TOKENIZER = ROOT / "coca_eval" / "zoo" / "checkpoints" / "zoo-rope"
SIMPLE_TEMPLATE = (  # the tests' plain turn format (tests/ruler/conftest.py)
    "{% for m in messages %}### {{ m['role'] }}:\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}### assistant:\n{% endif %}"
)
PREPARED_KEPT = ((True, True, True), (False, False, False), (True, False, True))


def prepared(prompts) -> list[dict]:
    """The fixture rows formatted and tokenised as BABILong's evaluation script does (see above)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(ZOO_TOKENIZER)
    out = []
    for path in sorted((ROOT / "tests" / "babilong" / "data" / "prepared").glob("*/*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        task = path.stem
        for kept, (index, row) in itertools.product(PREPARED_KEPT, enumerate(rows)):
            cfg = {
                p: prompts.DEFAULT_PROMPTS[task][p] if keep else ""
                for p, keep in zip(PARTS, kept, strict=True)
            }
            text = prompts.get_formatted_input(row["input"], row["question"], cfg["examples"],
                                               cfg["instruction"], cfg["post_prompt"],
                                               template=prompts.DEFAULT_TEMPLATE)  # fmt: skip
            plain = tokenizer.encode(text, add_special_tokens=True)
            turn = [{"role": "user", "content": text}]
            chat = tokenizer.apply_chat_template(turn, chat_template=SIMPLE_TEMPLATE, tokenize=True,
                                                 add_generation_prompt=True)  # fmt: skip
            chat = list(chat["input_ids"] if hasattr(chat, "keys") else chat)
            out.append({"length": path.parent.name, "task": task, "row": index, "kept": list(kept),
                        "text": text, "plain": {"tokens": len(plain), "sha256": digest(plain)},
                        "chat": {"tokens": len(chat), "sha256": digest(chat)}})  # fmt: skip
    return out


def digest(ids: list[int]) -> str:
    return hashlib.sha256(json.dumps([int(i) for i in ids]).encode()).hexdigest()


def main(babilong: Path, export_prompts: bool, export_prepared: bool = False) -> dict:
    sys.path.insert(0, str(babilong))
    prompts, metrics = importlib.import_module("prompts"), importlib.import_module("metrics")
    commit = (babilong / "COMMIT").read_text().strip()
    if export_prepared:
        return {"babilong_commit": commit, "prepared": prepared(prompts)}
    if export_prompts:
        return {
            "babilong_commit": commit,
            "template": prompts.DEFAULT_TEMPLATE,
            "prompts": prompts.DEFAULT_PROMPTS,
            "labels": metrics.TASK_LABELS,
        }
    cases = json.loads((ROOT / "tests" / "babilong" / "data" / "cases.json").read_text(encoding="utf-8"))
    formatted = []
    for task in sorted(prompts.DEFAULT_PROMPTS, key=lambda t: int(t[2:])):
        for kept in itertools.product((True, False), repeat=3):
            parts = {
                p: prompts.DEFAULT_PROMPTS[task][p] if keep else ""
                for p, keep in zip(PARTS, kept, strict=True)
            }
            for case in cases["contexts"]:
                text = prompts.get_formatted_input(case["context"], case["question"], **parts)
                formatted.append({"task": task, "kept": list(kept), "case": case["name"], "text": text})
    scored = [
        {**c, "correct": bool(metrics.compare_answers(c["target"], c["output"], c["question"],
                                                      metrics.TASK_LABELS[c["task"]]))}
        for c in cases["outputs"]
    ]  # fmt: skip
    return {"babilong_commit": commit, "formatted": formatted, "scored": scored}


if __name__ == "__main__":
    flags = sys.argv[2:]
    values = main(Path(sys.argv[1]), "--prompts" in flags, "--prepared" in flags)
    print(json.dumps(values, indent=1, ensure_ascii=False))
