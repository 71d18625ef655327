"""Grade tests/mrcr/data/responses.json with the published graders and print the scores as JSON: the
``grade`` function of OpenAI's MRCR dataset card (the ``cases``) and ``mrcr_v2_metric`` of Google
DeepMind's ``eval_hub/mrcr_v2/run_evaluation.py`` (the ``v2_cases``).

Run outside this project, with any Python 3.9+, on the card's README.md (``openai/mrcr`` on the hub,
``huggingface-cli download openai/mrcr README.md --repo-type dataset``) and a checkout of
google-deepmind/eval_hub: the script takes each grader's function alone (the rest of each file calls
a model's API) and calls it on each frozen case. Nothing of this project is imported.

    python scripts/mrcr_grader_values.py README.md EVAL_HUB/eval_hub/mrcr_v2/run_evaluation.py \
        > tests/mrcr/data/published_values.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def card_grade(readme: Path):
    """The card's ``grade``: its definition, cut from the code block at the next top-level line."""
    text = readme.read_text(encoding="utf-8")
    start = text.index("def grade(")
    lines = text[start:].splitlines()
    body = [lines[0]]
    for line in lines[1:]:
        if line and not line[0].isspace():
            break
        body.append(line)
    namespace: dict = {}
    exec("from difflib import SequenceMatcher\n" + "\n".join(body), namespace)  # noqa: S102
    return namespace["grade"]


def deepmind_metric(source: Path):
    """``mrcr_v2_metric`` from DeepMind's file: its definition alone, found with ``ast``."""
    import ast

    text = source.read_text(encoding="utf-8")
    (node,) = [n for n in ast.parse(text).body if getattr(n, "name", None) == "mrcr_v2_metric"]
    namespace: dict = {}
    exec("import difflib\n" + ast.get_source_segment(text, node), namespace)  # noqa: S102
    return namespace["mrcr_v2_metric"]


def main() -> None:
    grade, metric = card_grade(Path(sys.argv[1])), deepmind_metric(Path(sys.argv[2]))
    cases = json.loads((Path(__file__).parent.parent / "tests/mrcr/data/responses.json").read_text())
    scores = [float(grade(c["response"], c["answer"], c["prefix"])) for c in cases["cases"]]
    v2 = [float(metric(c["response"], c["answer"])) for c in cases["v2_cases"]]
    graders = "openai/mrcr README.md grade(); google-deepmind/eval_hub mrcr_v2/run_evaluation.py"
    print(json.dumps({"graders": graders, "scores": scores, "v2_scores": v2}, indent=1))


if __name__ == "__main__":
    main()
