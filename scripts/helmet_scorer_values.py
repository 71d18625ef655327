"""Score tests/helmet/data/predictions.json with HELMET's own functions and print the values as JSON.

Run outside this project, against a checkout of princeton-nlp/HELMET (HELMET is not on PyPI; a
directory holding only its ``utils.py`` and ``data.py`` and a ``COMMIT`` file naming the commit will
do), in a venv
holding what ``utils.py`` imports (``rouge-score``, ``pytrec-eval-terrier``; torch is imported there but
never used by these functions, so it is stubbed when absent) and, for the RULER cases, what ``data.py``
imports (``datasets``, ``transformers``, torch):

    python -m venv /tmp/venv-helmet && /tmp/venv-helmet/bin/pip install rouge-score==0.1.2 \
        pytrec-eval-terrier==0.5.11 numpy \
        torch==2.13.0 transformers datasets
    /tmp/venv-helmet/bin/python scripts/helmet_scorer_values.py HELMET_DIR \
        > tests/helmet/data/helmet_values.json

Each task's answer is post-processed as HELMET's ``data.py`` does for it: RAG (``default_post_process``)
and json_kv score the raw and the parsed answer and keep the better, ICL scores the label parsed after
``label:``, re-ranking parses the ranking and reads trec_eval's NDCG@10 (``calculate_retrieval_metrics``),
RULER's tasks score the fraction of references in the raw answer (``load_ruler``'s post-processing).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

METRICS = ("exact_match", "f1", "substring_exact_match")


def _helmet_utils(helmet: Path):
    try:
        importlib.import_module("torch")
    except ImportError:
        stub = types.ModuleType("torch")  # imported by utils.py, unused by its scorers
        stub.Tensor = type("Tensor", (), {})  # what libraries probing for torch arrays look up
        sys.modules["torch"] = stub
    sys.path.insert(0, str(helmet))
    return importlib.import_module("utils")


def _better(utils, output: str, answers, prefix: str | None) -> dict:
    scored = utils.calculate_metrics(output, answers)
    parsed = utils.parse_output(output, prefix) if prefix else utils.parse_output(output)
    if parsed is not None:
        again = utils.calculate_metrics(parsed, answers)
        scored = {k: max(v, again[k]) for k, v in scored.items()}
    return {k: float(scored[k]) for k in METRICS} | {"parsed": parsed}


def main(helmet: Path, predictions: Path) -> dict:
    utils = _helmet_utils(helmet)
    cases = json.loads(predictions.read_text(encoding="utf-8"))
    commit = subprocess.run(["git", "-C", str(helmet), "rev-parse", "HEAD"], capture_output=True, text=True)
    recorded = helmet / "COMMIT"  # an export of the files without their git directory names it here
    named = commit.stdout.strip() if commit.returncode == 0 else recorded.read_text().strip()
    values: dict = {"helmet_commit": named}
    values["qa"] = [_better(utils, c["output"], c["answers"], None) for c in cases["qa"]]
    values["json_kv"] = [
        _better(utils, c["output"], c["answer"], "corresponding value:") for c in cases["json_kv"]
    ]
    values["icl"] = []
    for case in cases["icl"]:
        parsed = utils.parse_output(case["output"], "label:")
        scored = utils.calculate_metrics(parsed, case["answer"])
        values["icl"].append({k: float(scored[k]) for k in METRICS} | {"parsed": parsed})
    values["rerank"] = []
    for case in cases["rerank"]:
        ranking = utils.parse_rankings(case["output"])
        scored = utils.calculate_retrieval_metrics({"q": ranking}, {"q": case["qrel"]}, k_values=[10])
        values["rerank"].append({"ranking": ranking, "ndcg_at_10": scored["NDCG@10"]})
    values["ruler"] = _ruler_recalls(helmet, cases["ruler"])
    return values


def _ruler_recalls(helmet: Path, cases: list) -> list:
    """HELMET's RULER post-processing is a closure inside ``load_ruler`` (``data.py``): load a one-row
    file through it and score each case with the function it returns."""
    import tempfile

    data = importlib.import_module("data")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "row.jsonl"
        path.write_text(json.dumps({"context": "c", "query": "q", "outputs": ["x"]}) + "\n")
        post_process = data.load_ruler("ruler_niah_mk_2", str(path))["post_process"]
        scored = [post_process({"output": c["output"]}, {"answer": c["answers"]})[0] for c in cases]
    return [metrics["ruler_recall"] for metrics in scored]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    print(
        json.dumps(main(Path(sys.argv[1]), root / "tests" / "helmet" / "data" / "predictions.json"), indent=1)
    )
