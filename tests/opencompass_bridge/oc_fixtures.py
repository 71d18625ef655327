"""Small OpenCompass artefacts written by hand: a summary CSV and a finished work directory."""

from __future__ import annotations

import json
from pathlib import Path

SUMMARY = """dataset,version,metric,mode,LLaMA-7B,LLaMA_CoCA
--------- Exam ---------,-,-,-,-,-
COPA,9f3618,accuracy,ppl,72.00,66.00
AX_b,6db806,accuracy,ppl,57.50,-
csl_dev,841b62,accuracy,ppl,52.40,58.50
csl_test,841b62,accuracy,ppl,50.00,51.00
BoolQ,314b96,accuracy,ppl,69.40,62.40
mmlu,-,naive_average,ppl,35.00,25.70
lukaemon_mmlu_anatomy,ac766d,accuracy,ppl,30.00,20.00
"""


def write_summary(directory: Path, text: str = SUMMARY) -> Path:
    path = Path(directory) / "summary_20260101_000000.csv"
    path.write_text(text, encoding="utf-8")
    return path


def write_outputs(work: Path, model: str, results: dict[str, float], predictions: dict[str, int]) -> Path:
    """``work/<timestamp>`` with results and prediction files as OpenCompass lays them out."""
    output = Path(work) / "20260101_000000"
    for abbr, accuracy in results.items():
        path = output / "results" / model / f"{abbr}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"accuracy": accuracy}))
    for abbr, count in predictions.items():
        path = output / "predictions" / model / f"{abbr}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({str(i): {"prediction": "A"} for i in range(count)}))
    return output
