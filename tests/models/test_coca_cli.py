"""CoCA checkpoints go through the command line like any other model."""

import pytest
from test_cli import run_cli

from coca_eval.results import load_run


@pytest.mark.slow  # a long check (over 20 s on 2 cores): runs in CI's slow suite
def test_convert_then_ppl_and_passkey_on_coca(tiny_llama_bos_dir, corpus_file, tmp_path):
    coca_dir = tmp_path / "coca"
    converted = run_cli("convert", "--from-llama", "--variant", "strict", tiny_llama_bos_dir, coca_dir)
    assert converted.returncode == 0, converted.stderr
    assert '"coca_variant": "strict"' in (coca_dir / "config.json").read_text()

    ppl_out = tmp_path / "ppl.json"
    ppl = run_cli(
        "ppl",
        "--model",
        coca_dir,
        "--rope",
        "none",
        "--rope",
        "dynamic:2",
        "--dataset",
        corpus_file,
        "--lengths",
        "64,512",
        "--stride",
        "32",
        "--doc-tokens",
        "512",
        "--num-docs",
        "2",
        "--output",
        ppl_out,
    )
    assert ppl.returncode == 0, ppl.stderr
    cells = load_run(ppl_out).cells
    assert [c.status for c in cells] == ["ok"] * 4 and cells[1].value != cells[
        3
    ].value  # the patch acts at 512

    pk_out = tmp_path / "pk.json"
    passkey = run_cli(
        "passkey",
        "--model",
        coca_dir,
        "--lengths",
        "300",
        "--samples",
        "3",
        "--max-new-tokens",
        "5",
        "--output",
        pk_out,
    )
    assert passkey.returncode == 0, passkey.stderr
    cell = load_run(pk_out).cells[0]
    assert cell.status == "ok" and cell.n == 3 and cell.detail["prefix_reuse"] is True


def test_convert_rejects_bad_input(tmp_path):
    result = run_cli("convert", tmp_path / "missing", tmp_path / "out")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
