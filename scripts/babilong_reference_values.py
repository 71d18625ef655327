"""BABILong's own prompt formatting and answer check, run on this project's frozen cases, printed as JSON.

Run outside this project against a directory holding BABILong's ``prompts.py`` and ``metrics.py`` at one
commit and a ``COMMIT`` file naming it (``git show COMMIT:babilong/prompts.py`` etc. from a clone of
booydar/babilong; both files import nothing, so any Python 3 runs them):

    python scripts/babilong_reference_values.py BABILONG_DIR > tests/babilong/data/babilong_values.json
    python scripts/babilong_reference_values.py BABILONG_DIR --prompts > coca_eval/babilong/prompts.json

The first writes the reference the tests hold ``coca_eval.babilong`` to: ``get_formatted_input`` on
every task x every combination of the prompt's parts (instruction, examples, post-prompt present or
left empty, as BABILong's evaluation grid does) for the contexts and questions of
``tests/babilong/data/cases.json``, and ``compare_answers`` with ``TASK_LABELS`` on its frozen outputs.
The second exports BABILong's prompt texts (``DEFAULT_PROMPTS``, ``DEFAULT_TEMPLATE``) and label sets
(``TASK_LABELS``) as the package's data: BABILong's prompts are its protocol, used as they are.
"""

from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("instruction", "examples", "post_prompt")


def main(babilong: Path, export_prompts: bool) -> dict:
    sys.path.insert(0, str(babilong))
    prompts, metrics = importlib.import_module("prompts"), importlib.import_module("metrics")
    commit = (babilong / "COMMIT").read_text().strip()
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
    print(json.dumps(main(Path(sys.argv[1]), "--prompts" in sys.argv[2:]), indent=1, ensure_ascii=False))
