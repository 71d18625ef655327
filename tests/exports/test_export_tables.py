"""What every destination shows is the run's own numbers: a table per task (methods by length), every
cell with its interval, every sample's record, the run's config with its provenance."""

from __future__ import annotations

import json

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.exports.run_tables import read_export
from coca_eval.lengths import format_length
from coca_eval.results import SCHEMA
from tests.exports.conftest import cells_of


def test_a_task_table_holds_each_cell_under_its_length(passkey_run):
    export = read_export(passkey_run)
    (table,) = export.task_tables().values()
    assert list(table.columns) == ["method", "dataset", "metric", "512", "1k", "2k"]
    for cell in cells_of(passkey_run):
        row = table[table["method"] == cell["method"]]
        assert row[format_length(cell["length"])].item() == cell["value"]
    assert len(table) == 2  # one row per method


def test_an_old_run_of_fractions_is_exported_in_points(passkey_run):
    raw = json.loads(passkey_run.read_text())
    assert raw["schema"] == "coca-eval/1" and "unit" not in raw["cells"][0]  # passkey accuracy 0-1
    (table,) = read_export(passkey_run).task_tables().values()
    frame = read_export(passkey_run).cells_frame()
    for cell, low in zip(raw["cells"], frame["low95"], strict=True):
        row = table[table["method"] == cell["method"]]
        assert row[format_length(cell["length"])].item() == pytest.approx(100 * cell["value"])
        assert low == pytest.approx(100 * cell["detail"]["wilson95"][0])


def test_length_columns_ascend_whatever_order_the_cells_are_stored_in(passkey_run):
    run = json.loads(passkey_run.read_text())
    run["cells"].reverse()  # 2k first
    passkey_run.write_text(json.dumps(run))
    (table,) = read_export(passkey_run).task_tables().values()
    assert list(table.columns)[3:] == ["512", "1k", "2k"]


def test_a_failed_cell_shows_its_status_never_a_number(passkey_run):
    run = json.loads(passkey_run.read_text())
    run["cells"][1] |= {"status": "oom", "value": None}
    passkey_run.write_text(json.dumps(run))
    (table,) = read_export(passkey_run).task_tables().values()
    method = run["cells"][1]["method"]
    assert table[table["method"] == method]["1k"].item() == "oom"


def test_every_cell_keeps_its_interval_and_every_sample_its_cell(passkey_run):
    export = read_export(passkey_run)
    frame = export.cells_frame()
    cells = cells_of(passkey_run)
    assert list(zip(frame["low95"], frame["high95"], strict=True)) == [
        tuple(c["detail"]["wilson95"]) for c in cells
    ]
    (samples,) = export.samples().values()
    assert len(samples) == sum(c["n"] for c in cells)
    first = cells[0]
    assert samples[0] == {
        "method": first["method"], "dataset": None, "length": first["length"], "metric": "accuracy",
        **first["detail"]["samples"][0],
    }  # fmt: skip


def test_the_config_names_where_an_import_came_from(ruler_run):
    config = read_export(ruler_run).config()
    assert config["source"]["harness"] == json.loads(ruler_run.read_text())["config"]["source"]["harness"]
    assert config["coca_eval"]["schema"] == SCHEMA
    assert {"version", "created", "git"} <= set(config["coca_eval"])


def test_an_unfinished_run_is_refused(passkey_run):
    run = json.loads(passkey_run.read_text())
    run["cells"][0] |= {"status": "partial", "value": None}
    passkey_run.write_text(json.dumps(run))
    with pytest.raises(CocaEvalError):
        read_export(passkey_run)


def test_the_report_plots_come_along(passkey_run, tmp_path):
    plots = read_export(passkey_run).draw_plots(tmp_path / "plots")
    assert plots and all(png.stat().st_size > 1000 for _, png in plots)
    assert all(caption for caption, _ in plots)
