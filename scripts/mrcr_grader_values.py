"""Grade tests/mrcr/data/responses.json with the ``grade`` function of OpenAI's MRCR dataset card and
print the scores as JSON.

Run outside this project, with any Python 3.9+, on the card's README.md (``openai/mrcr`` on the hub,
``huggingface-cli download openai/mrcr README.md --repo-type dataset``): the script takes the card's
code block, keeps the ``grade`` function alone (the rest calls OpenAI's API) and calls it on each
frozen case. Nothing of this project is imported.

    python scripts/mrcr_grader_values.py README.md > tests/mrcr/data/published_values.json
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


def main() -> None:
    grade = card_grade(Path(sys.argv[1]))
    cases = json.loads((Path(__file__).parent.parent / "tests/mrcr/data/responses.json").read_text())
    scores = [float(grade(c["response"], c["answer"], c["prefix"])) for c in cases["cases"]]
    print(json.dumps({"grader": "openai/mrcr README.md grade()", "scores": scores}, indent=1))


if __name__ == "__main__":
    main()
