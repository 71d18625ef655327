"""Item 12: a hand-edited or foreign results file is one line and exit 2 in report and gate."""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

from coca_eval.results import Cell, Run, save_run

GOOD_DOC = {"doc_id": "d0", "nll_sum": 3.0, "tokens": 2}
PPL_CONFIG = {"task": "ppl", "params": {"dataset": "pg19"}}


def _write(tmp_path, name: str, detail: dict, config: dict | None = None):
    cell = Cell(task="ppl", method="m", metric="ppl", length=512, value=4.0, detail=detail)
    path = tmp_path / f"{name}.json"
    save_run(Run(config=PPL_CONFIG), path)
    raw = json.loads(path.read_text())
    raw["cells"] = [cell.model_dump(mode="json")]
    raw["config"] = config or PPL_CONFIG
    path.write_text(json.dumps(raw))
    return path


BAD = {
    "missing tokens": ({"docs": [{"doc_id": "d0", "nll_sum": 3.0}]}, None),
    "string nll_sum": ({"docs": [{**GOOD_DOC, "nll_sum": "a lot"}]}, None),
    "docs not a list": ({"docs": 5}, None),
    "methods as strings": ({"docs": [GOOD_DOC]}, {**PPL_CONFIG, "methods": ["m"]}),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", ["report", "gate"])
def test_malformed_results_file_is_one_line_exit_2(tmp_path, capsys, case, command):
    bad = _write(tmp_path, "bad", *BAD[case])
    good = _write(tmp_path, "good", {"docs": [GOOD_DOC, {**GOOD_DOC, "doc_id": "d1"}]})
    if command == "report":
        result = invoke(capsys, "report", bad, "--out", tmp_path / "out", "--no-plots")
    else:
        result = invoke(capsys, "gate", "--baseline", good, "--candidate", bad)
    assert_one_line_error(result, 2, str(bad))
    assert not (tmp_path / "out").exists()
