"""The gate on every submission: rerun the committed baselines and gate the results against them.

``reports/baseline/ppl_tiny.json`` was made by :func:`produce_ppl` on a tiny LLaMA whose weights come
from NumPy's seeded generator (stable across torch and transformers versions);
``reports/baseline/passkey_zoo.json`` by :func:`produce_passkey` on the shipped ``zoo-rope``, which
retrieves every key at 512 tokens, so a candidate that lost retrieval has something to drop from
(``tests/faults/test_gate_baseline_drop.py`` shows the gate failing one). The test makes the same runs
again and expects ``coca-eval gate`` to pass: a change of protocol (sampled documents, passkey keys,
window plan) exits 2 and a change of numbers beyond tolerance exits 1, so either one shows up here
before it reaches a user's baseline.

Regenerate the baselines after an intended change with ``python tests/test_gate_baseline.py``.
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
# zoo-rope inside its 512-token window, each prompt after <|endoftext|> as in its training (--bos always
# names that BOS for any model directory, so a candidate checkpoint outside the presets reads the same
# prompts); a key's answer is 7 tokens. Ten samples take seconds on a CPU.
PASSKEY_ARGS = ["passkey", "--lengths", "512", "--samples", "10", "--max-new-tokens", "8", "--bos", "always"]
PASSKEY_MODEL = "zoo-rope"


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


def produce_ppl(work: Path, output: Path) -> Path:
    """The tiny model and its books in ``work`` (named relative to it, so the run records no machine's
    paths), the ppl run in ``output``: exactly what the committed baseline is."""
    from tiny_models import tiny_corpus_text

    from coca_eval.cli import main

    make_gate_model(work / MODEL)
    books = "".join(json.dumps({"text": t}) + "\n" for t in tiny_corpus_text())
    (work / "books.jsonl").write_text(books, encoding="utf-8")
    with working_directory(work):
        main([*PPL_ARGS, "--output", str(Path(output).resolve())])
    return output


def produce_passkey(output: Path, model: str | Path = PASSKEY_MODEL) -> Path:
    """The passkey run of ``model`` (the committed baseline's is ``zoo-rope``) in ``output``."""
    from coca_eval.cli import main

    main([*PASSKEY_ARGS, "--model", str(model), "--output", str(output)])
    return output


def gate_verdict(capsys, monkeypatch, baseline: Path, candidate: Path):
    """``coca-eval gate --json`` of ``candidate`` against ``baseline``: (exit code, verdict or output)."""
    from test_gate_cli import invoke

    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")
    result = invoke(capsys, "gate", "--baseline", baseline, "--candidate", candidate, "--json")
    try:
        return result.returncode, json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.returncode, result.stdout + result.stderr


def test_rerun_passes_the_gate_against_the_committed_baseline(tmp_path, capsys, monkeypatch):
    from test_gate_cli import invoke

    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    ppl = produce_ppl(work, out / "ppl_tiny.json")
    passkey = produce_passkey(out / "passkey_zoo.json")
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "200")
    args = ["gate", "--baseline", BASELINE / "ppl_tiny.json", "--candidate", ppl]
    result = invoke(
        capsys, *args, "--baseline", BASELINE / "passkey_zoo.json", "--candidate", passkey, "--json"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert [(c["task"], c["length"], c["verdict"]) for c in verdict["cells"]] == [
        ("ppl", 64, "pass"),
        ("ppl", 128, "pass"),
        ("passkey", 512, "inconclusive"),  # 10 samples: an interval too wide to see a 5-point drop
    ]
    assert all(abs(c["effect"]) < 1e-4 for c in verdict["cells"])  # same weights, same numbers


if __name__ == "__main__":  # regenerate reports/baseline/ (run from the repository root)
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for stale in BASELINE.glob("*.journal.jsonl"):
        stale.unlink()
    with tempfile.TemporaryDirectory() as scratch, working_directory(ROOT):
        written = (
            produce_ppl(Path(scratch), BASELINE / "ppl_tiny.json"),
            produce_passkey(BASELINE.relative_to(ROOT) / "passkey_zoo.json"),  # a path of no machine
        )
    for path in written:
        print(f"wrote {(ROOT / path).relative_to(ROOT)}")
