"""The gate on LongPPL cells: paired over documents on the key-token sums, and only between cells that
hold one key-token set (any other pair is a one-line refusal)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from longppl_runs import longppl_cell, longppl_run

from coca_eval.errors import CocaEvalError
from coca_eval.gate import GateOptions, IncomparableRuns, run_gate
from coca_eval.gate.stats import paired_ppl_ratio
from coca_eval.ppl.longppl.records import SELF_JUDGED
from coca_eval.results import save_run
from coca_eval.taskspec import load_checked_run

DOCS = 12
KEY_NLL = np.linspace(1.2, 1.9, DOCS)
KEYS = np.array([3, 5, 8, 2, 6, 4, 7, 3, 5, 6, 2, 4])
WOBBLE = 0.003 * np.sin(np.arange(DOCS))  # deterministic, sign-balanced run-to-run differences
OPTIONS = GateOptions(n_boot=500)


def gate(base_cells, cand_cells, base_params=None, cand_params=None):
    base = longppl_run(base_cells, **(base_params or {}))
    cand = longppl_run(cand_cells, **(cand_params or {}))
    return run_gate([(base, cand)], OPTIONS)


def test_an_identical_run_passes_with_no_change():
    result = gate([longppl_cell(KEY_NLL, KEYS)], [longppl_cell(KEY_NLL, KEYS)])
    (cell,) = result.cells
    assert not result.failed and cell.verdict == "pass"
    assert cell.result.effect == pytest.approx(0.0, abs=1e-12) and cell.units == DOCS


def test_a_rise_on_the_key_tokens_fails_and_is_measured_on_them_only():
    """5 % more LongPPL on every document fails; the effect is the LongPPL ratio, which a test on
    all tokens (most of them not key) would dilute to about 0.3 %."""
    base = longppl_cell(KEY_NLL, KEYS)
    worse = longppl_cell(KEY_NLL + math.log(1.05) + WOBBLE, KEYS)
    result = gate([base], [worse])
    (cell,) = result.cells
    assert result.failed and cell.verdict == "regression"
    assert cell.result.effect == pytest.approx(worse.value / base.value - 1, rel=1e-9)
    assert cell.result.effect == pytest.approx(0.05, abs=0.002)


def test_a_change_off_the_key_tokens_does_not_move_longppl():
    result = gate([longppl_cell(KEY_NLL, KEYS)], [longppl_cell(KEY_NLL + WOBBLE, KEYS, other_nll=4.0)])
    assert not result.failed and abs(result.cells[0].result.effect) < 0.002


def test_the_test_is_ppls_bootstrap_on_the_key_token_sums():
    base, cand = longppl_cell(KEY_NLL, KEYS), longppl_cell(KEY_NLL + 0.01 + WOBBLE, KEYS)
    (cell,) = gate([base], [cand]).cells
    expected = paired_ppl_ratio(KEY_NLL * KEYS, (KEY_NLL + 0.01 + WOBBLE) * KEYS, KEYS, 0.05, 500, 0)
    assert (cell.result.low, cell.result.high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    assert cell.result.p_value == pytest.approx(expected.p_value)


def test_documents_without_key_tokens_are_drawn_but_give_no_sign():
    """Two of twelve documents hold no key token: the test still runs over all twelve (so its interval
    is not the ten's), and the units it reports, which bound its smallest p-value, are the ten."""
    keys = KEYS.copy()
    keys[[3, 10]] = 0
    result = gate([longppl_cell(KEY_NLL, keys)], [longppl_cell(KEY_NLL + 0.04 + WOBBLE, keys)])
    (cell,) = result.cells
    assert cell.units == DOCS - 2 and cell.verdict == "regression"
    assert math.isfinite(cell.result.low) and math.isfinite(cell.result.high)
    held = keys > 0
    ten = paired_ppl_ratio(
        (KEY_NLL * keys)[held], ((KEY_NLL + 0.04 + WOBBLE) * keys)[held], keys[held], 0.05, 500, 0
    )
    assert (cell.result.low, cell.result.high) != pytest.approx((ten.low, ten.high), rel=1e-9)


def test_one_document_with_key_tokens_compares_the_values_against_the_tolerance():
    keys = np.zeros(DOCS, dtype=int)
    keys[4] = 6
    result = gate([longppl_cell(KEY_NLL, keys)], [longppl_cell(KEY_NLL + 0.2, keys)])
    (cell,) = result.cells
    assert cell.result is None and cell.verdict == "regression"
    assert "1 document(s) with key tokens" in cell.reason and "beyond tolerance" in cell.reason


def _other_spans(doc_to_change: int):
    spans = [[[10 + d + 2 * k, 11 + d + 2 * k] for k in range(KEYS[d])] for d in range(DOCS)]
    spans[doc_to_change] = [[s + 1, e + 1] for s, e in spans[doc_to_change]]
    return spans


def test_different_key_token_sets_are_refused_in_one_line_naming_the_document():
    """A candidate judged on its own key tokens measures another set of tokens: no verdict, exit 2."""
    base = longppl_cell(KEY_NLL, KEYS)
    other = longppl_cell(KEY_NLL, KEYS, spans=_other_spans(5))
    with pytest.raises(IncomparableRuns) as caught:
        gate([base], [other])
    message = str(caught.value)
    assert "key-token sets differ" in message and "'d5'" in message and "--key-tokens" in message
    assert "\n" not in message


def test_the_same_spans_over_other_tokens_are_refused():
    """Another tokenizer: the same character spans hold another number of tokens."""
    spans = [[[10 + d, 11 + d]] for d in range(DOCS)]
    keys = KEYS.copy()
    keys[2] += 1
    with pytest.raises(IncomparableRuns, match="document 'd2' has 8 vs 9 key tokens"):
        gate([longppl_cell(KEY_NLL, KEYS, spans=spans)], [longppl_cell(KEY_NLL, keys, spans=spans)])


def test_runs_that_got_one_key_token_set_in_different_ways_are_compared():
    """The baseline judged by an evaluator, the candidate scored on the baseline's file: their key-token
    parameters differ, their key tokens do not, so the gate compares them."""
    from_file = {"evaluator_model": None, "key_tokens": "base.json", "short": 4096, "bound": 2.5}
    result = gate([longppl_cell(KEY_NLL, KEYS)], [longppl_cell(KEY_NLL + WOBBLE, KEYS)], None, from_file)
    assert not result.failed and result.cells[0].result is not None


def test_other_parameters_must_still_agree():
    with pytest.raises(IncomparableRuns, match="bos 'auto' vs 'never'"):
        gate([longppl_cell(KEY_NLL, KEYS)], [longppl_cell(KEY_NLL, KEYS)], None, {"bos": "never"})


def test_a_cell_without_key_tokens_is_no_number_to_gate():
    """Both runs' 16-token cells hold no key token (undefined, an error cell): skipped, never compared
    as a value; the defined cell is gated as usual."""
    none = np.zeros(DOCS, dtype=int)
    base = [longppl_cell(KEY_NLL, none, length=16), longppl_cell(KEY_NLL, KEYS)]
    cand = [longppl_cell(KEY_NLL, none, length=16), longppl_cell(KEY_NLL + WOBBLE, KEYS)]
    result = gate(base, cand, {"lengths": [16, 96]}, {"lengths": [16, 96]})
    undefined, defined = result.cells
    assert undefined.pair.base.status == "error" and undefined.pair.base.value is None
    assert undefined.verdict == "skipped" and undefined.result is None and undefined.value_change is None
    assert defined.verdict == "pass" and defined.result is not None


def test_key_tokens_the_baseline_judged_for_itself_are_flagged():
    """They were picked where the baseline's own loss is low: the gate still runs, and says so."""
    own = longppl_cell(KEY_NLL, KEYS, context={"evaluator": SELF_JUDGED})
    from_file = longppl_cell(KEY_NLL + WOBBLE, KEYS, context={"key_tokens_from": "base.json"})
    self_judged, file_params = {"evaluator_model": None}, {"evaluator_model": None, "key_tokens": "base.json"}
    flagged = gate([own], [from_file], self_judged, file_params)
    (note,) = [n for n in flagged.notes if "LongPPL" in n]
    assert "longppl 'm' @ 96 were judged by the baseline model itself" in note and "--evaluator-model" in note
    assert not flagged.failed  # a note, not a verdict
    judged = gate([longppl_cell(KEY_NLL, KEYS)], [from_file], None, file_params)
    rerun = gate(
        [own], [longppl_cell(KEY_NLL, KEYS, context={"evaluator": SELF_JUDGED})], self_judged, self_judged
    )
    assert not [n for n in judged.notes + rerun.notes if "LongPPL" in n]


def test_a_damaged_key_token_record_is_one_line_naming_the_file(tmp_path):
    """The gate and the report load runs through the task's records: a hand-edited count is refused."""
    path = tmp_path / "run.json"
    save_run(longppl_run([longppl_cell(KEY_NLL, KEYS)]), path)
    data = json.loads(path.read_text())
    data["cells"][0]["detail"]["docs"][1]["key_tokens"] = "5"
    path.write_text(json.dumps(data))
    with pytest.raises(
        CocaEvalError, match=r"run\.json is invalid at cells\.0\.detail: key_tokens"
    ) as caught:
        load_checked_run(path)
    assert "\n" not in str(caught.value)
