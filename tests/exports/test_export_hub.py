"""``export hub``: the run as a dataset repository in lm-eval's Hub-logging layout, read back by
``datasets`` the way the Hub's viewer reads it, and uploaded through ``huggingface_hub`` unchanged to
a stand-in server (the only thing faked is the other end of the HTTP connection)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from coca_eval.exports.hub_layout import write_layout
from coca_eval.exports.run_tables import read_export
from tests.exports.conftest import cells_of, cli
from tests.exports.fake_hub import serve

METHOD = "smollm2-135m"  # lm-eval's model name in the imported run


@pytest.fixture
def fake_hub():
    hub, server = serve()
    yield hub
    server.shutdown()


def _task_and_date(name: str) -> tuple[str, str]:
    """lm-eval 0.4.13's reading of a samples file name (its get_file_task_name, get_file_datetime)."""
    return name[name.find("_") + 1 : name.rfind("_")], name[name.rfind("_") + 1 :].replace(".jsonl", "")


def test_the_layout_is_lm_evals_and_holds_the_runs_numbers(ruler_run, tmp_path):
    files = write_layout(read_export(ruler_run), tmp_path / "repo")
    names = sorted(p.relative_to(tmp_path / "repo").as_posix() for p in files)
    stamp = re.search(r"results_(.+)\.json", names[-3]).group(1)
    assert names == [
        "README.md",
        f"{METHOD}/results_{stamp}.json",
        f"{METHOD}/samples_niah_single_1_{stamp}.jsonl",
        f"{METHOD}/samples_vt_{stamp}.jsonl",
    ]
    assert _task_and_date(f"samples_niah_single_1_{stamp}.jsonl") == ("niah_single_1", stamp)
    results = json.loads((tmp_path / "repo" / names[1]).read_text())
    cells = cells_of(ruler_run)
    for cell in cells:
        assert results["results"][cell["dataset"]][f"{cell['length']},none"] == cell["value"]
    assert results["model_name_sanitized"] == METHOD
    assert results["coca_eval_config"]["source"]["harness"] == "lm-eval"
    lines = [json.loads(x) for x in (tmp_path / "repo" / names[3]).read_text().splitlines()]
    vt = [c for c in cells if c["dataset"] == "vt"]
    assert len(lines) == sum(c["n"] for c in vt) == results["n-samples"]["vt"]["effective"]
    records = [s for c in vt for s in c["detail"]["samples"]]
    assert [line["doc_id"] for line in lines] == [
        s.get("doc_id", s["index"]) for s in records
    ]  # lm-eval's own


def test_each_sample_line_holds_its_index_as_doc_id(passkey_run, tmp_path):
    """A run of this project's own (its records carry no ``doc_id`` of their own, unlike lm-eval's): each
    samples line's ``doc_id`` is the sample's index as the results file holds it, so the exporter's
    own field is what is read, not a ``doc_id`` the record brought along."""
    raw = json.loads(passkey_run.read_text())
    records = [s for c in raw["cells"] for s in c["detail"]["samples"]]
    assert records and all("doc_id" not in s for s in records)
    files = write_layout(read_export(passkey_run), tmp_path / "repo")
    lines = [
        json.loads(x) for p in files if p.name.startswith("samples_") for x in p.read_text().splitlines()
    ]
    by_method = {}
    for cell in raw["cells"]:
        by_method.setdefault(cell["method"], []).extend(s["index"] for s in cell["detail"]["samples"])
    assert [line["doc_id"] for line in lines] == [i for indices in by_method.values() for i in indices]
    assert all(isinstance(line["doc_id"], int) for line in lines)


def test_datasets_reads_each_config_the_card_names(ruler_run, tmp_path):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "repo"
    write_layout(read_export(ruler_run), folder)
    card = yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])
    names = [c["config_name"] for c in card["configs"]]
    assert names == [f"{METHOD}__results", f"{METHOD}__niah_single_1", f"{METHOD}__vt"]
    cells = cells_of(ruler_run)
    for task in ("niah_single_1", "vt"):
        rows = datasets.load_dataset(str(folder), name=f"{METHOD}__{task}", split="latest")
        expected = [s for c in cells if c["dataset"] == task for s in c["detail"]["samples"]]
        assert rows["output"] == [s["output"] for s in expected]
        assert rows["score"] == [s["score"] for s in expected]


def test_an_upload_sends_the_layout_in_one_commit_to_a_private_dataset(ruler_run, tmp_path, fake_hub):
    env = {"HF_ENDPOINT": fake_hub.endpoint, "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"}
    done = cli(
        "export", "hub", str(ruler_run), "--repo-id", "me/ruler", "--out", "kept", cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert fake_hub.created == [
        {"name": "ruler", "organization": "me", "visibility": "private", "type": "dataset"}
    ]
    (commit,) = fake_hub.commits
    kept = tmp_path / "kept"
    assert commit == {p.relative_to(kept).as_posix(): p.read_bytes() for p in kept.rglob("*") if p.is_file()}
    assert f"{fake_hub.endpoint}/datasets/me/ruler" in done.stdout


def test_an_upload_the_hub_does_not_keep_is_refused(ruler_run, tmp_path, fake_hub):
    """A Hub that acknowledges the commit and lists none of its files: the export said "uploaded" and
    exited 0; it reads the repository's listing back and exits 2 in one line."""
    fake_hub.keeps = False
    env = {"HF_ENDPOINT": fake_hub.endpoint, "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"}
    done = cli(
        "export", "hub", str(ruler_run), "--repo-id", "me/ruler", "--out", "kept", cwd=tmp_path, env=env
    )
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr[-2000:]
    assert "the Hub did not keep 4 of the 4 files uploaded to me/ruler" in done.stderr
    assert "uploaded:" not in done.stdout and (tmp_path / "kept" / "README.md").is_file()


def test_a_refused_upload_is_one_line_and_the_files_stay(ruler_run, tmp_path, fake_hub):
    env = {"HF_ENDPOINT": fake_hub.endpoint, "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"}
    args = ["export", "hub", str(ruler_run), "--repo-id", "me/ruler", "--out", "kept", "--public"]
    done = cli(*args, cwd=tmp_path, env={**env, "HF_ENDPOINT": fake_hub.endpoint + "/nowhere"})
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "me/ruler" in done.stderr
    assert (tmp_path / "kept" / "README.md").is_file()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--repo-id", "no-owner"], "OWNER/NAME"),
        (["--repo-id", "me/x", "--dry-run"], "--out"),
    ],
)
def test_bad_options_are_one_line(ruler_run, tmp_path, args, says):
    done = cli("export", "hub", str(ruler_run), *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and says in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_dry_run_writes_the_files_and_sends_nothing(ruler_run, tmp_path, fake_hub):
    env = {"HF_ENDPOINT": fake_hub.endpoint, "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"}
    done = cli(
        "export", "hub", str(ruler_run), "--repo-id", "me/x", "--out", "o", "--dry-run", cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert fake_hub.requests == [] and len(list((tmp_path / "o").rglob("*.json*"))) == 3


def _results_file(files) -> dict:
    (path,) = [p for p in files if p.name.startswith("results_")]
    return json.loads(path.read_text())


def test_a_failed_cell_is_written_as_its_status_not_as_a_number(ruler_run, tmp_path):
    raw = json.loads(ruler_run.read_text())
    failed = raw["cells"][0]
    failed.update(status="oom", value=None)
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(raw))
    results = _results_file(write_layout(read_export(path), tmp_path / "repo"))["results"]
    assert results[failed["dataset"]][f"{failed['length']},none"] == "oom"
    ok = [c for c in raw["cells"] if c is not failed]
    assert all(results[c["dataset"]][f"{c['length']},none"] == c["value"] for c in ok)


def test_several_metrics_of_one_row_keep_each_its_own_number(ruler_run, tmp_path):
    """Two metrics at each length of one row: every (metric, length) number is in the row, once."""
    raw = json.loads(ruler_run.read_text())
    vt = [c for c in raw["cells"] if c["dataset"] == "vt"]
    extra = [{**c, "metric": "partial_match", "value": c["value"] / 2 + 1.0, "detail": {}} for c in vt]
    raw["cells"] += extra
    path = tmp_path / "two_metrics.json"
    path.write_text(json.dumps(raw))
    row = _results_file(write_layout(read_export(path), tmp_path / "repo"))["results"]["vt"]
    numbers = sorted(v for k, v in row.items() if k != "alias")
    assert numbers == sorted(c["value"] for c in vt + extra)
    assert len(row) - 1 == len(vt + extra) == 2 * len(vt)
