"""Fill AA-LCR's answering prompt and its 1.0 judge prompt with the code of NVIDIA NeMo Gym's port of
the benchmark, for each question of this project's smoke set and a few candidate answers, and print
them as JSON: the values ``tests/aa_lcr/test_aa_lcr_prompts.py`` compares this project's builders with.

No copy of the dataset card (``ArtificialAnalysis/AA-LCR``, README) is kept offline, so the published
code run here is NeMo Gym's: ``benchmarks/aalcr/prepare.py`` builds the
answering prompt (its ``documents_text`` and ``prompt`` assignments, taken alone with ``ast``) and
``resources_servers/aalcr/app.py`` the judge prompt (its ``judge_prompt`` assignment). Run outside
this project, with any Python 3.9+ and a checkout of NVIDIA-NeMo/Gym; nothing of this project is
imported, and the smoke set's files are read as plain CSV and text.

    python3 scripts/aa_lcr_prompt_values.py GYM_CHECKOUT > tests/aa_lcr/data/published_prompts.json
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

SMOKE = Path(__file__).resolve().parent.parent / "coca_eval" / "aa_lcr" / "smoke"
CANDIDATES = ("", "42", "The answer is 2.2 million pounds.\nIt grew.", "Mill Meadow {not} a $template")


def assignment(source: Path, function: str, target: str) -> str:
    """The source of the assignment to ``target`` inside ``function`` of ``source``."""
    text = source.read_text(encoding="utf-8")
    (node,) = [n for n in ast.walk(ast.parse(text)) if getattr(n, "name", None) == function]
    for statement in ast.walk(node):
        targets = getattr(statement, "targets", [])
        if isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in targets] == [target]:
            return ast.get_source_segment(text, statement)
    raise SystemExit(f"no assignment to {target} in {function} of {source}")


def main() -> None:
    gym = Path(sys.argv[1])
    prepare, app = gym / "benchmarks/aalcr/prepare.py", gym / "resources_servers/aalcr/app.py"
    build = assignment(prepare, "prepare", "documents_text") + "\n" + assignment(prepare, "prepare", "prompt")
    judge = assignment(app, "verify", "judge_prompt")
    with (SMOKE / "AA-LCR_Dataset.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases = []
    for row in rows:
        folder = SMOKE / "lcr" / row["document_category"] / row["document_set_id"]
        names = row["data_source_filenames"].split(";")
        scope = {"document_texts": [(folder / n).read_text(encoding="utf-8") for n in names], "row": row}
        exec(build, scope)  # noqa: S102 - the port's own two assignments
        judged = []
        for candidate in CANDIDATES:
            values = {"body": SimpleNamespace(question=row["question"], answer=row["answer"])}
            values["candidate_answer"] = candidate
            exec(judge, values)  # noqa: S102
            judged.append({"candidate": candidate, "judge_prompt": values["judge_prompt"]})
        cases.append({"question_id": row["question_id"], "prompt": scope["prompt"], "judged": judged})
    commit = subprocess.run(["git", "-C", str(gym), "rev-parse", "HEAD"], capture_output=True, text=True)
    source = (
        f"NVIDIA-NeMo/Gym@{commit.stdout.strip()} benchmarks/aalcr/prepare.py, resources_servers/aalcr/app.py"
    )
    print(json.dumps({"source": source, "cases": cases}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
