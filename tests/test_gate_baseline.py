"""The gate on every submission: rerun the committed tiny baseline and gate the result against it.

``reports/baseline/{ppl,passkey}_tiny.json`` were made by :func:`produce_runs` on a tiny LLaMA whose
weights come from NumPy's seeded generator (stable across torch and transformers versions). The test
makes the same runs again and expects ``coca-eval gate`` to pass: a change of protocol (sampled
documents, passkey keys, window plan) exits 2 and a change of numbers beyond tolerance exits 1, so
either one shows up here before it reaches a user's baseline.

Regenerate the baseline after an intended change with ``python tests/test_gate_baseline.py``.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "reports" / "baseline"
MODEL = "tiny-gate-model"
PPL_ARGS = ["ppl", "--model", MODEL, "--dataset", "books.jsonl", "--lengths", "64,128", "--stride", "32",
            "--doc-tokens", "256", "--num-docs", "4"]  # fmt: skip
PASSKEY_ARGS = [
    "passkey",
    "--model",
    MODEL,
    "--lengths",
    "230,300",
    "--samples",
    "8",
    "--max-new-tokens",
    "6",
]


def make_gate_model(directory: Path) -> Path:
    """The tiny LLaMA of the tests, its weights redrawn from ``numpy.random.default_rng(0)``."""
    import numpy as np
    import torch
    from tiny_models import make_tiny_llama
    from transformers import AutoModelForCausalLM

    make_tiny_llama(directory, add_bos=False)
    model = AutoModelForCausalLM.from_pretrained(directory)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for _, tensor in sorted(model.state_dict().items()):
            if tensor.ndim >= 2:
                tensor.copy_(torch.from_numpy(rng.normal(0.0, 0.05, tuple(tensor.shape)).astype(np.float32)))
    model.save_pretrained(directory)
    return directory


@contextmanager
def working_directory(path: Path):
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def produce_runs(work: Path, out: Path) -> list[Path]:
    """Model and books in ``work`` (named relative to it, so the run records no machine's paths),
    results in ``out``: exactly what the committed baseline is."""
    from tiny_models import tiny_corpus_text

    from coca_eval.cli import main

    make_gate_model(work / MODEL)
    books = "".join(json.dumps({"text": t}) + "\n" for t in tiny_corpus_text())
    (work / "books.jsonl").write_text(books, encoding="utf-8")
    outputs = [Path(out).resolve() / "ppl_tiny.json", Path(out).resolve() / "passkey_tiny.json"]
    with working_directory(work):
        for args, output in zip((PPL_ARGS, PASSKEY_ARGS), outputs, strict=True):
            main([*args, "--output", str(output)])
    return outputs


def test_rerun_passes_the_gate_against_the_committed_baseline(tmp_path, capsys, monkeypatch):
    from test_gate_cli import invoke

    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    ppl, passkey = produce_runs(work, out)
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")
    args = ["gate", "--baseline", BASELINE / "ppl_tiny.json", "--candidate", ppl]
    result = invoke(
        capsys, *args, "--baseline", BASELINE / "passkey_tiny.json", "--candidate", passkey, "--json"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert [(c["task"], c["length"], c["verdict"]) for c in verdict["cells"]] == [
        ("ppl", 64, "pass"),
        ("ppl", 128, "pass"),
        ("passkey", 230, "pass"),
        ("passkey", 300, "pass"),
    ]
    assert all(abs(c["effect"]) < 1e-4 for c in verdict["cells"])  # same weights, same numbers


if __name__ == "__main__":  # regenerate reports/baseline/ (run from the repository root)
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for stale in BASELINE.glob("*.journal.jsonl"):
        stale.unlink()
    with tempfile.TemporaryDirectory() as scratch:
        for path in produce_runs(Path(scratch), BASELINE):
            print(f"wrote {path.relative_to(ROOT)}")
