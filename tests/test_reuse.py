"""``--reuse``: a row two runs share (same model, weights, patch, protocol; any label) is computed once,
copied into the second run's journal with the same numbers; anything else is computed as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faults.fault_cli import journal_entries, run_cli

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.reuse import source_journal

PROTOCOL = ["--lengths", "32,64", "--stride", "16", "--doc-tokens", "128", "--num-docs", "2"]


def _ppl(model, corpus, output, *extra, methods=None):
    rows = ["--methods", methods] if methods else ["--model", model]
    return run_cli("ppl", *rows, "--dataset", corpus, *PROTOCOL, "--output", output, *extra)


def _values(results: Path) -> dict[tuple[str, int], float]:
    return {(c["method"], c["length"]): c["value"] for c in json.loads(results.read_text())["cells"]}


@pytest.fixture(scope="module")
def first_run(tiny_llama_dir, corpus_file, tmp_path_factory):
    """Table A: the tiny model as it is, under its default label."""
    out = tmp_path_factory.mktemp("first") / "a.json"
    result = _ppl(tiny_llama_dir, corpus_file, out)
    assert result.returncode == 0, result.stderr[-2000:]
    return out


def _methods_file(folder: Path, model: Path) -> Path:
    """Table B: the same row under another label, and a row Table A does not have."""
    path = folder / "b.yaml"
    path.write_text(
        "methods:\n"
        f"  - {{model: '{model}', label: 'baseline again'}}\n"
        f"  - {{model: '{model}', rope: 'linear:2', label: 'with PI'}}\n"
    )
    return path


def test_a_shared_row_is_copied_with_its_numbers_and_the_rest_is_computed(
    first_run, tiny_llama_dir, corpus_file, tmp_path
):
    out = tmp_path / "b.json"
    methods = _methods_file(tmp_path, tiny_llama_dir)
    result = _ppl(tiny_llama_dir, corpus_file, out, "--reuse", first_run, methods=methods)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"reused from {first_run}: 2 finished cell(s), 0 part(s)" in result.stderr
    a, b = _values(first_run), _values(out)
    default_label = next(iter(a))[0]
    assert b[("baseline again", 32)] == a[(default_label, 32)]
    assert b[("baseline again", 64)] == a[(default_label, 64)]
    assert b[("with PI", 64)] != a[(default_label, 64)]  # the patch changes the number: computed here
    entries = journal_entries(out.with_suffix(".journal.jsonl"))
    copied = {e["key"] for e in entries if e["kind"] == "cell"} & {
        e["key"] for e in journal_entries(first_run.with_suffix(".journal.jsonl"))
    }
    assert len(copied) == 2
    assert not [e for e in entries if e["kind"] == "part" and e["key"] in copied]  # nothing rescored
    assert json.loads(out.read_text())["config"]["reused_from"] == [str(first_run)]


def test_another_protocol_shares_no_key_and_takes_nothing(first_run, tiny_llama_dir, corpus_file, tmp_path):
    out = tmp_path / "c.json"
    result = _ppl(tiny_llama_dir, corpus_file, out, "--stride", "32", "--reuse", first_run)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "0 finished cell(s), 0 part(s)" in result.stderr
    assert _values(out)[next(iter(_values(out)))] != _values(first_run)[next(iter(_values(first_run)))]


def test_a_shard_jobs_parts_are_taken_and_the_cells_equal_an_uninterrupted_run(
    first_run, tiny_llama_dir, corpus_file, tmp_path
):
    shard = tmp_path / "half.json"
    assert _ppl(tiny_llama_dir, corpus_file, shard, "--shard", "1/2").returncode == 0
    out = tmp_path / "whole.json"
    journal = shard.with_suffix(".shard-1-of-2.journal.jsonl")
    result = _ppl(tiny_llama_dir, corpus_file, out, "--reuse", journal)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "0 finished cell(s), 2 part(s)" in result.stderr  # one document of two, at both lengths
    assert _values(out) == _values(first_run)


def test_a_missing_source_is_one_line_and_exit_2(tiny_llama_dir, corpus_file, tmp_path):
    result = _ppl(tiny_llama_dir, corpus_file, tmp_path / "out.json", "--reuse", tmp_path / "gone.json")
    err = result.stderr.strip()
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert err.splitlines()[-1].startswith("coca-eval: error:") and "no such results file" in err, err


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("gone.journal.jsonl", None, "no such journal"),
        ("corrupt.json", "{not json", "not a coca-eval results file"),
    ],
)
def test_a_bad_source_is_named(tmp_path, name, content, says):
    source = tmp_path / name
    if content is not None:
        source.write_text(content)
    with pytest.raises(CocaEvalError, match=says):
        source_journal(source)


def test_a_results_file_without_its_journal_is_refused_by_name(first_run, tmp_path):
    moved = tmp_path / "moved.json"
    data = json.loads(first_run.read_text())
    data["config"]["journal"] = str(tmp_path / "gone.journal.jsonl")
    moved.write_text(json.dumps(data))
    with pytest.raises(CocaEvalError, match="moved.journal.jsonl. is not beside it"):
        source_journal(moved)


def test_a_read_only_journal_loads_without_the_lock_and_never_writes(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    with Journal(path) as holder:
        holder.record_part("k", "0", {"doc_id": "a"})
        reader = Journal.read_only(path)  # the holder still has the lock
        assert reader.parts == {"k": {"0": {"doc_id": "a"}}}
        with pytest.raises(RuntimeError, match="read-only"):
            reader.record_part("k", "1", {"doc_id": "b"})
    assert len(path.read_text().splitlines()) == 1
