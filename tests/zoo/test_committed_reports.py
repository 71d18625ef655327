"""The zoo's committed report runs: they are in the repository, load through the result contract, and
still show what the README says they show.

These read committed data, not a model: they fail when a results file is missing from a checkout
(ignored by accident, say) or when a rerun changed the numbers the README quotes.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest

from coca_eval.results import Cell, load_run, read_results_text

pytestmark = pytest.mark.committed_data  # every test here reads committed runs and reports, no model

ZOO = Path(__file__).resolve().parents[2] / "reports" / "zoo"
RUNS = ZOO / "runs"
# The curated runs behind the zoo's tables and claims (reports/zoo/README.md). Every passkey run reads
# each prompt after <|endoftext|>, as the zoo trained (the zoo presets declare it: --bos auto). The
# earlier readings (cold, 20 samples) and the shard journals are in git history (docs/zoo.md).
COMMITTED = [
    "bar_heldout_ppl.json",
    "bar_train_ppl.json",
    "table1_ppl.json",
    "table2_passkey.json.gz",
    "table3_ppl.json",
    "table3_passkey.json.gz",
    "prope_heldout_ppl.json",
    "prope_outside_ppl.json",
    "finetune_ppl.json",
    "finetune_passkey.json.gz",
    "table4_ppl.json",
    "table4_passkey.json.gz",
    "vllm_ppl.json",
    "vllm_passkey.json",
    "vllm_dynamic_hold.json",
    "dynamic-hold/passkey_hold_100.json.gz",
    "table1_positions_ppl.json",
    "table1_longppl.json.gz",
]


@pytest.mark.parametrize("name", COMMITTED)
def test_every_report_run_is_committed_and_loads(name):
    run = load_run(RUNS / name)
    assert run.cells and all(c.status == "ok" for c in run.cells)


def ppl(run, method: str, length: int) -> float:
    (cell,) = [c for c in run.cells if c.method == method and c.length == length and c.metric == "ppl"]
    return cell.value


def test_the_committed_bar_run_shows_the_acceptance_bar():
    """zoo-rope at 8x its training length is at least 5x its perplexity at the training length (x15.2),
    and well below the unigram floor of its tokenizer at 512 (75.60 against 282.5 on these books)."""
    run = load_run(RUNS / "bar_heldout_ppl.json")
    at_512, at_4k = ppl(run, "RoFormer", 512), ppl(run, "RoFormer", 4096)
    assert at_4k / at_512 >= 5.0
    assert at_512 < 282.5 / 3


def passkey(run, method: str, length: int) -> float:
    (cell,) = [c for c in run.cells if c.method == method and c.length == length and c.metric == "accuracy"]
    return cell.value


def test_the_committed_table1_shows_the_readme_picture():
    """Table 1 in miniature as the README reads it: RoFormer breaks past its window and CoCA breaks
    several times less, dynamic NTK & CoCA is the best RoPE row from 4k on, ALiBi stays flat, NoPE is
    the best row inside the window and the worst far past it."""
    run = load_run(RUNS / "table1_ppl.json")
    assert ppl(run, "RoFormer", 16384) / ppl(run, "RoFormer", 512) >= 5.0
    assert ppl(run, "RoFormer", 16384) / ppl(run, "RoFormer + CoCA", 16384) >= 4.0
    for length in (4096, 8192, 16384):
        best = ppl(run, "RoFormer + dynamic NTK & CoCA", length)
        assert best < ppl(run, "RoFormer + dynamic NTK", length) and best < ppl(
            run, "RoFormer + CoCA", length
        )
    assert abs(ppl(run, "ALiBi", 16384) / ppl(run, "ALiBi", 512) - 1) < 0.05
    assert ppl(run, "NoPE", 512) == min(ppl(run, m, 512) for m in {c.method for c in run.cells})
    assert ppl(run, "NoPE", 16384) / ppl(run, "NoPE", 512) >= 100


def test_dynamic_ntk_held_through_the_answer_retrieves_inside_the_window_and_strict_trails_past_it():
    """--dynamic-rope hold (512..4k, 100 samples): every dynamic-NTK row retrieves at 512 (where the
    rescaling reading lost it), and CoCA-Strict trails CoCA-Slack at 1k by at least 0.2 under every
    factor."""
    run = load_run(RUNS / "dynamic-hold" / "passkey_hold_100.json.gz")
    assert run.config["params"]["dynamic_rope"] == "hold"
    assert all(c.n == 100 for c in run.cells) and len(run.cells) == 28
    assert all(passkey(run, m, 512) >= 0.95 for m in {c.method for c in run.cells})
    for factor in (2, 4, 8):
        assert passkey(run, f"CoCA-Strict ntk-{factor}", 1024) + 0.2 <= passkey(
            run, f"CoCA-Slack ntk-{factor}", 1024
        )


def test_the_claims_quote_the_gate_on_the_100_sample_held_reading():
    claims = (ZOO / "claims_passkey.md").read_text()
    assert (
        "| dynamic-hold/passkey_hold_100.json.gz | CoCA-Slack ntk-2 → CoCA-Strict ntk-2 | 1024 "
        "| 54.00 | 1.00 |" in claims
    )


def test_table2_read_as_trained_with_100_samples_to_16k():
    """Table 2 as the README reads it (100 samples, 512..16k, the document-start token in front): the
    plain rows retrieve at 512 and RoFormer, CoCA and p-RoPE nothing past it; dynamic NTK & CoCA beats
    dynamic NTK at 1k, with the gate's p in claims_passkey.md; ALiBi fades with length."""
    run = load_run(RUNS / "table2_passkey.json.gz")
    assert "bos" not in run.config["params"]  # auto: the zoo presets put <|endoftext|> in front
    for m in ("ALiBi", "RoFormer", "RoFormer + CoCA", "NoPE", "p-RoPE (p=0.75)"):
        assert passkey(run, m, 512) >= 0.9, m
    for m in ("RoFormer", "RoFormer + CoCA", "p-RoPE (p=0.75)"):
        assert all(passkey(run, m, 1024 * 2**k) <= 0.02 for k in range(5)), m
    ntk = passkey(run, "RoFormer + dynamic NTK", 1024)
    assert passkey(run, "RoFormer + dynamic NTK & CoCA", 1024) >= ntk + 0.2
    alibi = [passkey(run, "ALiBi", 512 * 2**k) for k in range(6)]
    assert alibi == sorted(alibi, reverse=True) and alibi[-1] < 0.1
    claims = (ZOO / "claims_passkey.md").read_text()
    pair = "RoFormer + dynamic NTK → RoFormer + dynamic NTK & CoCA"
    assert f"| table2_passkey.json.gz | {pair} | 1024 |" in claims


def test_table3_read_as_trained_with_100_samples_shows_slack_retrieving_and_strict_not():
    """Table 3 as the README reads it (100 samples, 512..16k, dynamic NTK): CoCA-Slack retrieves at
    512 and 1k under every factor, CoCA-Strict answers at most one prompt anywhere, nothing answers
    past 4k, and claims_passkey.md carries the gate's Strict-against-Slack rows."""
    run = load_run(RUNS / "table3_passkey.json.gz")
    lengths = [512 * 2**k for k in range(6)]
    for factor in (2, 4, 8):
        slack, strict = f"CoCA-Slack ntk-{factor}", f"CoCA-Strict ntk-{factor}"
        assert passkey(run, slack, 1024) >= 0.25, slack
        assert sum(passkey(run, strict, n) for n in lengths) <= 0.01, strict
        assert passkey(run, slack, 8192) == passkey(run, slack, 16384) == 0, slack
    assert passkey(run, "CoCA-Slack ntk-2", 512) >= 0.9
    claims = (ZOO / "claims_passkey.md").read_text()
    assert "| table3_passkey.json.gz | CoCA-Slack ntk-2 → CoCA-Strict ntk-2 | 512 | 96.00 | 0.00 |" in claims


def test_the_fine_tunes_read_as_trained_retrieve_nothing_where_their_base_does():
    """The fine-tuning rows and Table 4 (100 samples, 512..16k): zoo-rope retrieves at 512 as in
    Table 2, and every fine-tune (CoCA, PI, CoCA & PI; plain and with dynamic NTK) answers none of its
    600 prompts; the gate's row for zoo-rope against its CoCA fine-tune is in claims_passkey.md."""
    finetune, table4 = load_run(RUNS / "finetune_passkey.json.gz"), load_run(RUNS / "table4_passkey.json.gz")
    table2 = load_run(RUNS / "table2_passkey.json.gz")
    assert passkey(finetune, "zoo-rope", 512) == passkey(table2, "RoFormer", 512) >= 0.9
    tuned = [c for c in finetune.cells if "CoCA" in c.method] + list(table4.cells)
    assert len(tuned) == 24 and all(c.value == 0 for c in tuned)
    claims = (ZOO / "claims_passkey.md").read_text()
    assert "| finetune_passkey.json.gz | zoo-rope → zoo-rope + CoCA | 512 | 98.00 | 0.00 |" in claims


def test_the_committed_table3_shows_the_readme_picture():
    """Table 3 in miniature: CoCA-Strict is within 10 % of CoCA-Slack at every dynamic-NTK factor and
    length (lower at 512, 2-9 % higher past it), and Slack at x4 is Table 1's "+ dynamic NTK & CoCA"
    row (one model, one protocol: the same cells)."""
    run, table1 = load_run(RUNS / "table3_ppl.json"), load_run(RUNS / "table1_ppl.json")
    lengths = sorted({c.length for c in run.cells})
    assert lengths == [512, 1024, 2048, 4096, 8192, 16384]
    for factor in (2, 4, 8):
        assert ppl(run, f"CoCA-Strict ntk-{factor}", 512) < ppl(run, f"CoCA-Slack ntk-{factor}", 512)
        for length in lengths:
            ratio = ppl(run, f"CoCA-Strict ntk-{factor}", length) / ppl(
                run, f"CoCA-Slack ntk-{factor}", length
            )
            assert 0.9 < ratio < 1.1, (factor, length)
    for length in lengths:
        assert ppl(run, "CoCA-Slack ntk-4", length) == ppl(table1, "RoFormer + dynamic NTK & CoCA", length)


def test_the_committed_finetune_rows_show_the_readme_picture():
    """The fine-tuning rows: zoo-rope converted to CoCA and fine-tuned at 512 fails far less past its
    window (57.06 against 636.28 at 16k) at a small cost inside it (20.63 against 20.39), and zoo-rope's
    rows are Table 1's RoFormer rows (one model, one protocol: the same cells)."""
    run, table1 = load_run(RUNS / "finetune_ppl.json"), load_run(RUNS / "table1_ppl.json")
    assert ppl(run, "zoo-rope", 16384) / ppl(run, "zoo-rope + CoCA", 16384) >= 4.0
    assert ppl(run, "zoo-rope + CoCA", 512) > ppl(run, "zoo-rope", 512)
    for length in (512, 4096, 16384):
        assert ppl(run, "zoo-rope", length) == ppl(table1, "RoFormer", length)
        assert ppl(run, "zoo-rope + dynamic NTK", length) == ppl(table1, "RoFormer + dynamic NTK", length)


def test_the_committed_table4_shows_the_readme_picture():
    """Table 4 in miniature: both rows were fine-tuned with PI x4 at 2048 tokens; from there to 16k PI
    alone climbs 10.1x and CoCA & PI 1.35x (the README: 172.70 against 21.15 at 4k, 170.92 against 26.05
    at 16k), and inside that length CoCA & PI costs some perplexity (+14-15 %)."""
    run = load_run(RUNS / "table4_ppl.json")
    pi, both = "zoo-rope + PI", "zoo-rope + CoCA & PI"
    assert ppl(run, pi, 16384) / ppl(run, pi, 2048) >= 5.0
    assert ppl(run, both, 16384) / ppl(run, both, 2048) < 2.0
    for length in (4096, 16384):
        assert ppl(run, pi, length) / ppl(run, both, length) >= 2.5, length
    assert ppl(run, both, 512) > ppl(run, pi, 512)


def _hf_and_vllm_pairs(*names: str) -> dict[tuple, tuple[Cell, Cell]]:
    """The committed cells of ``names`` paired by (metric, model, length): each method reads
    ``MODEL (hf)`` or ``MODEL (vllm)``, the same model through the two backends."""
    by_backend: dict = {}
    for name in names:
        for cell in load_run(RUNS / name).cells:
            model, backend = cell.method.rsplit(" ", 1)
            by_backend.setdefault((cell.metric, model, cell.length), {})[backend] = cell
    return {key: (cells["(hf)"], cells["(vllm)"]) for key, cells in by_backend.items()}


def _answers(cell: Cell) -> list[str]:
    return [sample["output"] for sample in cell.detail["samples"]]


def test_the_committed_vllm_perplexity_reads_as_hf():
    """The RoPE and CoCA zoo models through vLLM on CPU: the perplexity of every cell within 1e-5 of
    hf's (measured: 6.8e-7 at most)."""
    pairs = _hf_and_vllm_pairs("vllm_ppl.json")
    assert len(pairs) == 3 * 4
    for (_, model, length), (hf, vllm) in pairs.items():
        assert abs(vllm.value / hf.value - 1) < 1e-5, (model, length)


@pytest.mark.parametrize(("name", "cells"), [("vllm_passkey.json", 6), ("vllm_dynamic_hold.json", 6)])
def test_read_as_trained_every_vllm_answer_is_hfs(name, cells):
    """With the document-start token in front, and with dynamic NTK held through the answer, all 60
    answers through vLLM are the very strings hf gives."""
    pairs = _hf_and_vllm_pairs(name).values()
    assert len(pairs) == cells
    assert all(_answers(hf) == _answers(vllm) and len(_answers(hf)) == 10 for hf, vllm in pairs)
    assert load_run(RUNS / name).config["params"].get("dynamic_rope") == (
        "hold" if "dynamic" in name else None
    )


@pytest.mark.parametrize(
    ("name", "methods_file"),
    [
        ("table2_passkey.json.gz", "table1"),
        ("table3_passkey.json.gz", "table3"),
        ("table4_passkey.json.gz", "table4"),
        ("finetune_passkey.json.gz", "finetune"),
    ],
)
def test_a_merged_passkey_table_has_every_row_at_every_length_with_100_answers(name, methods_file):
    """Every row of the table's methods file at 512..16k, 100 scored answers each, as its claims say."""
    from coca_eval.methods import load_methods_file

    run = load_run(RUNS / name)
    labels = [m.label for m in load_methods_file(ZOO / "methods" / f"{methods_file}.yaml", "float32", "hf")]
    expected = {(label, 512 * 2**k) for label in labels for k in range(6)}
    assert {(c.method, c.length) for c in run.cells} == expected
    assert all(c.n == 100 and len(c.detail["samples"]) == 100 for c in run.cells)


def test_the_report_script_asks_for_the_protocol_of_the_committed_passkey_tables():
    """scripts/zoo_reports.sh reproduces the committed passkey tables: the passkey preset at 512..16k
    with 100 samples, whose parameters are exactly those each committed table records (the zoo presets
    put <|endoftext|> in front under the default --bos auto, so no ``bos`` is recorded)."""
    from coca_eval.passkey.params import make_passkey_params
    from coca_eval.presets import get_preset

    script = (ZOO.parents[1] / "scripts" / "zoo_reports.sh").read_text()
    assert 'PASSKEY=(--preset passkey --lengths 512..16k --samples "$PASSKEY_SAMPLES")' in script
    assert "PASSKEY_SAMPLES=${PASSKEY_SAMPLES:-100}" in script
    values = {**get_preset("passkey", "passkey").params, "lengths": "512..16k", "samples": 100}
    expected = {**make_passkey_params(values).identity()}
    expected["lengths"] = list(expected["lengths"])
    for table in ("table2", "table3", "table4", "finetune"):
        assert load_run(RUNS / f"{table}_passkey.json.gz").config["params"] == expected, table


@functools.cache
def _committed_runs_by_stamp() -> dict[tuple[str, str], Path]:
    """Every committed results file under runs/, keyed by (file name, creation time)."""
    runs = {}
    for path in [*RUNS.rglob("*.json"), *RUNS.rglob("*.json.gz")]:
        created = json.loads(read_results_text(path)).get("created")
        if created:
            runs[(path.name, created)] = path
    return runs


@pytest.mark.parametrize("report", sorted(ZOO.glob("*/report.md")), ids=lambda p: p.parent.name)
def test_a_rendered_report_names_only_committed_runs(report):
    """Each run a rendered report lists (file name and creation time) is a committed run: a report
    left behind by a run that was recomputed (new weights, a new protocol) fails here until rendered
    again."""
    listed = re.findall(r"^- `([\w.-]+\.json(?:\.gz)?): \w+ run of (\S+),", report.read_text(), flags=re.M)
    assert listed, report
    committed = _committed_runs_by_stamp()
    assert [run for run in listed if tuple(run) not in committed] == []


def test_one_16k_window_per_document_is_table1s_16k_window():
    """The loss-by-position run reads each document in one 16k window, which is Table 1's 16k window
    (documents of 16384 tokens, no BOS): every row's and every document's NLL is Table 1's (a GPU there,
    CPU here: within 1e-5), and each document's buckets reach the last one, 12288..16383."""
    positions, table1 = load_run(RUNS / "table1_positions_ppl.json"), load_run(RUNS / "table1_ppl.json")
    assert positions.config["params"]["mode"] == "truncated" and len(positions.cells) == 7
    for cell in positions.cells:
        (old,) = [c for c in table1.cells if c.method == cell.method and c.length == 16384]
        assert cell.length == 16384 and abs(cell.value / old.value - 1) < 1e-5, cell.method
        for doc, old_doc in zip(cell.detail["docs"], old.detail["docs"], strict=True):
            assert (doc["doc_id"], doc["tokens"]) == (old_doc["doc_id"], old_doc["tokens"])
            assert abs(doc["nll_sum"] / old_doc["nll_sum"] - 1) < 1e-5
            assert doc["positions"]["starts"][-1] == 12288


def test_every_longppl_row_is_scored_on_one_key_token_set():
    """LongPPL as the paper scores models: one evaluator (zoo-coca-slack, its rule scaled to the zoo's
    512-token training: short context 64, step 16) judges the key tokens once per document, and every
    Table 1 row is scored on those very spans."""
    run = load_run(RUNS / "table1_longppl.json.gz")
    params = run.config["params"]
    assert (params["evaluator_model"], params["short"], params["step"]) == ("zoo-coca-slack", 64, 16)
    assert (params["bound"], params["margin"]) == (2.0, 2.0)
    assert len(run.cells) == 7 and all(c.status == "ok" and c.length == 16384 for c in run.cells)
    spans = {json.dumps([d["spans"] for d in c.detail["docs"]]) for c in run.cells}
    assert len(spans) == 1 and len({c.n for c in run.cells}) == 1


def test_the_committed_longppl_table_is_a_fresh_render():
    from coca_eval.ppl.longppl.compare import markdown

    script = "bash reports/zoo/measurements.sh report"
    assert (ZOO / "longppl.md").read_text() == markdown(RUNS / "table1_longppl.json.gz", [], script)


def test_the_documentation_shows_the_rendered_figure():
    """docs/figures holds the very figure `coca-eval report` drew (the script copies it)."""
    rendered = ZOO / "measurements" / "plots" / "loss_vs_position_16384.png"
    shown = ZOO.parents[1] / "docs" / "figures" / "zoo_loss_by_position_16k.png"
    assert shown.read_bytes() == rendered.read_bytes()


def test_the_loss_by_position_table_the_docs_quote_is_the_committed_runs():
    """docs/measurements.md and the README print, per row, the mean loss in the buckets 384..511,
    1024..1535 and 12288..16382 of the committed run."""
    from coca_eval.ppl.position_plot import position_curve

    quoted = [(ZOO / "README.md").read_text(), (ZOO.parents[1] / "docs" / "measurements.md").read_text()]
    for cell in load_run(RUNS / "table1_positions_ppl.json").cells:
        curve = position_curve(cell)
        at = dict(zip(curve.starts.tolist(), curve.mean.tolist(), strict=True))
        line = f"| {cell.method} | " + " | ".join(f"{at[start]:.2f}" for start in (384, 1024, 12288)) + " |"
        assert all(line in text for text in quoted), line


def test_the_longppl_table_the_docs_quote_is_longppl_md():
    """Every row of reports/zoo/longppl.md's table, verbatim, in the README and docs/measurements.md."""
    rows = [line for line in (ZOO / "longppl.md").read_text().splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 7
    for text in ((ZOO / "README.md").read_text(), (ZOO.parents[1] / "docs" / "measurements.md").read_text()):
        assert all(row in text for row in rows)
        assert "1803 of 131064 scored tokens (1.38 %), 197 to 253 per document" in text
