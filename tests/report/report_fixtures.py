"""Fixed, hand-readable runs for report tests: a few of the paper's own rows, with an OOM and an inf."""

from __future__ import annotations

import math
from pathlib import Path

from coca_eval.results import Cell, Run, save_run

LENGTHS = (512, 1024, 2048)
PPL = {  # the CoCA paper's Table 1 values (first three lengths), with one OOM and one inf
    "ALibi": (18.69, 21.27, "oom"),
    "RoFormer": (19.66, 411.50, "inf"),
    "RoFormer + dynamic NTK": (19.66, 22.30, 38.00),
    "RoFormer + dynamic NTK & CoCA": (20.11, 20.81, 25.88),
}
ACCURACY = {  # passkey hits out of 10 samples
    "RoFormer": (10, 5, 3),
    "RoFormer + dynamic NTK & CoCA": (10, 10, 9),
}
PPL_PARAMS = {
    "dataset": "pg19",
    "doc_tokens": 4096,
    "mode": "sliding",
    "stride": 512,
    "bos": "auto",
    "seed": 0,
}
PASSKEY_PARAMS = {
    "samples": 10,
    "template": "landmark",
    "depths": "stratified",
    "max_new_tokens": 64,
    "seed": 0,
}


def ppl_cell(method: str, length: int, value) -> Cell:
    """Two documents whose token-averaged NLL gives exactly ``value`` (a third one shifts the spread)."""
    if isinstance(value, str):
        return Cell(task="ppl", method=method, metric="ppl", length=length, dataset="pg19", status=value)
    nll = math.log(value)
    docs = [
        {"doc_id": "a", "nll_sum": (nll - 0.05) * 1000, "tokens": 1000},
        {"doc_id": "b", "nll_sum": (nll + 0.05) * 1000, "tokens": 1000},
    ]
    return Cell(
        task="ppl",
        method=method,
        metric="ppl",
        length=length,
        dataset="pg19",
        value=value,
        n=2000,
        detail={"docs": docs},
    )


def passkey_cell(method: str, length: int, hits: int) -> Cell:
    samples = [
        {
            "index": i,
            "key": 10000 + i,
            "depth": (i + 0.5) / 10,
            "distance": int(length * (1 - (i + 0.5) / 10)),
            "correct": i < hits,
        }
        for i in range(10)
    ]
    return Cell(
        task="passkey",
        method=method,
        metric="accuracy",
        length=length,
        value=100 * hits / 10,  # points
        n=10,
        detail={"samples": samples},
    )


def fixed_runs(directory: Path) -> list[Path]:
    """``ppl.json`` and ``passkey.json`` in ``directory``: what the golden files were made from."""
    ppl = [ppl_cell(m, n, v) for m, values in PPL.items() for n, v in zip(LENGTHS, values, strict=True)]
    passkey = [
        passkey_cell(m, n, h) for m, hits in ACCURACY.items() for n, h in zip(LENGTHS, hits, strict=True)
    ]
    created = "2026-01-01T00:00:00+00:00"
    paths = [Path(directory) / "ppl.json", Path(directory) / "passkey.json"]
    save_run(
        Run(
            created=created,
            coca_eval_version="0.1.0",
            config={"task": "ppl", "params": PPL_PARAMS},
            cells=ppl,
        ),
        paths[0],
    )
    passkey_config = {"task": "passkey", "params": PASSKEY_PARAMS}
    save_run(Run(created=created, coca_eval_version="0.1.0", config=passkey_config, cells=passkey), paths[1])
    return paths


def opencompass_run(directory: Path) -> Path:
    """Benchmark cells under OpenCompass's own dataset names, to exercise the Table 5 mapping."""
    scores = {
        "SuperGLUE_COPA_ppl": (72.0, 66.0),
        "AX_b": (57.5, 41.9),
        "csl-dev": (52.4, 58.5),
        "mmlu": (35.0, 25.7),
    }
    cells = [
        Cell(task="opencompass", method=m, metric="accuracy", dataset=d, value=v, n=100)
        for d, values in scores.items()
        for m, v in zip(("LLaMA-7B", "LLaMA+CoCA"), values, strict=True)
    ]
    path = Path(directory) / "opencompass.json"
    save_run(
        Run(
            created="2026-01-01T00:00:00+00:00",
            coca_eval_version="0.1.0",
            config={"task": "opencompass"},
            cells=cells,
        ),
        path,
    )
    return path
