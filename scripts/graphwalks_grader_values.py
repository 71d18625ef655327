"""Grade tests/graphwalks/data/responses.json with the published GraphWalks grader and print the
scores as JSON: the answer-list extraction ``get_list`` of OpenAI's ``openai/graphwalks`` dataset card
and its precision/recall/F1 lines.

Run outside this project, with any Python 3.9+, on a Python file that holds the card's code: the
card's README puts ``get_list`` in a class and the F1 lines inline, so give a file where they stand
as free functions (``get_list(response)`` and a scorer ``(response, answer_nodes) -> F1``), as public
scorers quote them; name the scorer with ``--score``. The script takes those two definitions alone
(with ``ast``; a leading ``self`` parameter is dropped) and calls them on each frozen case. Nothing of
this project is imported.

    python scripts/graphwalks_grader_values.py CARD_CODE.py --score f1_score \\
        > tests/graphwalks/data/published_values.json
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path


def definitions(source: Path, names: list[str]) -> dict:
    """The functions ``names`` of ``source``, each compiled alone (``re`` imported for them), wherever
    they stand in the file (at its top or inside a class)."""
    text = source.read_text(encoding="utf-8")
    found = {
        n.name: n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name in names
    }
    missing = sorted(set(names) - set(found))
    if missing:
        raise SystemExit(f"{source}: no definition of {', '.join(missing)}")
    namespace: dict = {}
    for node in found.values():
        if node.args.args and node.args.args[0].arg == "self":
            node.args.args = node.args.args[1:]
        node.decorator_list = []
        module = ast.Module(body=[node], type_ignores=[])
        exec("import re\n" + ast.unparse(module), namespace)  # noqa: S102
    return namespace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("card_code", type=Path)
    parser.add_argument("--score", default="f1_score", help="the scorer's name in CARD_CODE")
    args = parser.parse_args()
    functions = definitions(args.card_code, ["get_list", args.score])
    get_list, score = functions["get_list"], functions[args.score]
    cases = json.loads((Path(__file__).parent.parent / "tests/graphwalks/data/responses.json").read_text())
    rows = []
    for case in cases["cases"]:
        names, failed = get_list(case["response"])
        rows.append(
            {
                "list": list(names),
                "failed": bool(failed),
                "f1": float(score(case["response"], case["answer_nodes"])),
            }
        )
    print(json.dumps({"grader": f"openai/graphwalks card: get_list, {args.score}", "values": rows}, indent=1))


if __name__ == "__main__":
    main()
