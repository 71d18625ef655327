"""``export wandb`` (offline) and ``export trackio`` write runs their own readers show: the tables equal
the run's, the config carries the protocol and provenance, the report's plots are images, nothing
lands outside the folder named; a missing extra is one line."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from coca_eval.results import SCHEMA
from tests.exports.conftest import cli, file_cells_in_points
from tests.exports.offline_records import offline_run

pytest.importorskip("wandb")
pytest.importorskip("trackio")


def _home(tmp_path: Path) -> dict[str, str]:
    """A fresh home, so a file a tracker writes outside the named folder is seen."""
    home = tmp_path / "home"
    home.mkdir()
    mpl = str(tmp_path / "matplotlib")  # matplotlib's font cache is not the trackers'
    return {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "HF_HOME": str(home / "hf"),
        "MPLCONFIGDIR": mpl,
    }


def _written(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_an_offline_wandb_run_holds_the_tables_config_and_plots(passkey_run, tmp_path):
    env = _home(tmp_path)
    done = cli(
        "export",
        "wandb",
        str(passkey_run),
        "--offline",
        "--dir",
        "wb",
        "--project",
        "p",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    config, logged = offline_run(tmp_path / "wb")
    written = json.loads(passkey_run.read_text())
    # the old file is exported as read: in points, in the current schema
    assert config["task"] == "passkey" and (written["schema"], config["coca_eval"]["schema"]) == (
        "coca-eval/1",
        SCHEMA,
    )
    assert config["methods"] == written["config"]["methods"]
    # what W&B stored, against the results file's own cells (not the exporter's reading of them), in points
    cells = file_cells_in_points(passkey_run)
    (run_dir,) = (tmp_path / "wb" / "wandb").glob("offline-run-*")
    saved = json.loads((run_dir / "files" / logged["passkey/table"]["path"]).read_text())
    header = {512: "512", 1024: "1k", 2048: "2k"}
    rows = {row[0]: dict(zip(saved["columns"], row, strict=True)) for row in saved["data"]}
    assert {(c["method"], c["length"], c["value"]) for c in cells} == {
        (method, length, row[name]) for method, row in rows.items() for length, name in header.items()
    }
    stored = json.loads((run_dir / "files" / logged["cells"]["path"]).read_text())
    stored_cells = [dict(zip(stored["columns"], row, strict=True)) for row in stored["data"]]
    assert [(c["method"], c["length"], c["value"], c["n"]) for c in stored_cells] == [
        (c["method"], c["length"], c["value"], c["n"]) for c in cells
    ]
    assert logged["passkey/samples"]["nrows"] == sum(c["n"] for c in cells)
    plots = [key for key in logged if key.startswith("plots/")]
    assert plots and all(logged[key]["_type"] == "image-file" for key in plots)
    assert all((run_dir / "files" / logged[key]["path"]).stat().st_size > 1000 for key in plots)
    assert _written(tmp_path / "home") == []  # W&B's staging, logs and settings stayed under wb/
    assert str(Path("wb") / "wandb" / run_dir.name) in done.stdout  # where the run is, to sync it


def test_a_trackio_project_reads_back_with_the_tables_and_config(passkey_run, tmp_path):
    env = _home(tmp_path)
    done = cli(
        "export",
        "trackio",
        str(passkey_run),
        "--dir",
        "tk",
        "--project",
        "p",
        "--name",
        "r1",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read_back = (
        "import json, sys; from trackio.sqlite_storage import SQLiteStorage as S; "
        "print(json.dumps([S.get_runs('p'), S.get_logs('p', 'r1'), S.get_run_config('p', 'r1')]))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", read_back], env={**os.environ, **env, "TRACKIO_DIR": str(tmp_path / "tk")},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    runs, logs, config = json.loads(shown.stdout)
    assert runs == ["r1"] and config["task"] == "passkey"
    (logged,) = logs
    # what Trackio stored, against the results file's own cells (not the exporter's reading of them), in
    # points
    cells = file_cells_in_points(passkey_run)
    header = {512: "512", 1024: "1k", 2048: "2k"}
    rows = {row["method"]: row for row in logged["passkey/table"]["_value"]}
    assert {(c["method"], c["length"], c["value"]) for c in cells} == {
        (method, length, row[name]) for method, row in rows.items() for length, name in header.items()
    }
    stored_cells = logged["cells"]["_value"]
    assert [(c["method"], c["length"], c["value"], c["n"]) for c in stored_cells] == [
        (c["method"], c["length"], c["value"], c["n"]) for c in cells
    ]
    assert len(logged["passkey/samples"]["_value"]) == sum(c["n"] for c in cells)
    assert any(key.startswith("plots/") and logged[key]["_type"] == "trackio.image" for key in logged)
    assert _written(tmp_path / "home") == []


def _unwritable(tmp_path: Path, how: str) -> str:
    """A Trackio folder it cannot write, whoever runs the test (root writes where permissions say no):
    a folder under a file, or the project's database file taken by a folder."""
    (tmp_path / "taken").write_text("a file, not a folder")
    if how == "under a file":
        return "taken/tk"
    (tmp_path / "tk" / "p.db").mkdir(parents=True)
    return "tk"


@pytest.mark.parametrize("how", ["under a file", "database is a folder"])
def test_a_trackio_folder_it_cannot_write_is_refused(passkey_run, tmp_path, how):
    """Trackio only warns ("this batch could not be persisted") and goes on; the export read nothing
    back and said it succeeded, exit 0. It reads the run back through Trackio and exits 2."""
    folder = _unwritable(tmp_path, how)
    args = ["export", "trackio", str(passkey_run), "--dir", folder, "--project", "p", "--name", "r1"]
    done = cli(*args, cwd=tmp_path, env=_home(tmp_path))
    assert done.returncode == 2, (done.stdout, done.stderr[-2000:])
    err = done.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("coca-eval: error: Trackio did not store run 'r1'"), err
    assert "none of its 7 tables and plots" in err and "Trackio run 'r1'" not in done.stdout


def test_a_missing_tracker_is_one_line_naming_the_extra(passkey_run, tmp_path):
    blocker = tmp_path / "blocked"
    blocker.mkdir()
    (blocker / "wandb.py").write_text("raise ImportError('not installed here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), _root()])}
    done = subprocess.run(
        [sys.executable, "-m", "coca_eval", "export", "wandb", str(passkey_run), "--offline"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "coca-eval[export]" in done.stderr
    assert not (tmp_path / "wandb").exists()


def test_a_results_file_that_is_not_one_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    done = cli("export", "trackio", str(bad), "--dir", "tk", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert not (tmp_path / "tk").exists()


def _root() -> str:
    return str(Path(__file__).resolve().parents[2])


def test_the_docs_export_example_runs_as_written(tmp_path):
    """docs/interop.md's export block, line by line, in a folder holding the committed run it names."""
    from tests.docs.doc_blocks import examples

    (block,) = [b for b in examples() if b.page == "docs/interop.md" and "export wandb" in b.body]
    run = Path("reports/embedded/passkey.json")
    (tmp_path / run).parent.mkdir(parents=True)
    (tmp_path / run).write_text((Path(_root()) / run).read_text())
    env = _home(tmp_path)
    for line in block.body.splitlines():
        if line.startswith("coca-eval "):
            done = cli(*shlex.split(line)[1:], cwd=tmp_path, env=env)
            assert done.returncode == 0, (line, done.stderr[-2000:])
    assert offline_run(tmp_path / "wandb-runs")[0]["task"] == "passkey"
    assert (tmp_path / "trackio-projects" / "coca-eval.db").is_file()
    assert (tmp_path / "hub-files" / "README.md").is_file()
    assert _written(tmp_path / "home") == []
