"""Item 18: a dataset the user names without --num-docs uses every qualifying document up to the
preset's count (and says so under the table); too few qualifying documents is one line stating the
values in force and where each came from. ``--metric longppl`` draws its documents the same way and
says so in the same words."""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_error_after_progress
from test_gate_cli import invoke
from tiny_models import tiny_corpus_text

from coca_eval.ppl.params import make_params

QUICK = ["--lengths", "32,64", "--stride", "16"]  # the default preset (zoo) draws 2 docs x 8192 tokens
# LongPPL reads one window per text (no --stride); a rule that finds key tokens in a random tiny model
LONGPPL = ["--metric", "longppl", "--lengths", "48,96", "--longppl-short", "24", "--longppl-step", "10",
           "--longppl-bound", "6", "--longppl-margin", "0.02"]  # fmt: skip


@pytest.fixture
def book(tmp_path):
    path = tmp_path / "book.txt"
    path.write_text(tiny_corpus_text(n_docs=1)[0])  # one document of some 1500 words
    return path


def _ppl(capsys, tiny_llama_dir, dataset, output, *extra):
    return invoke(
        capsys, "ppl", "--model", tiny_llama_dir, "--dataset", dataset, *QUICK, "--output", output, *extra
    )


def test_one_book_without_num_docs_is_used_with_a_note(tmp_path, capsys, tiny_llama_dir, book):
    out = tmp_path / "run.json"
    result = _ppl(capsys, tiny_llama_dir, book, out, "--doc-tokens", "128")
    assert result.returncode == 0, result.stderr[-2000:]
    note = result.stdout.strip().splitlines()[-1]
    assert note.startswith("Note: 1 document(s) of") and "--num-docs 2 from preset zoo" in note, note
    cells = json.loads(out.read_text())["cells"]
    assert [len(c["detail"]["docs"]) for c in cells] == [1, 1]
    assert all(c["status"] == "ok" for c in cells)


def test_a_corpus_with_enough_documents_gets_the_preset_count_and_no_note(
    tmp_path, capsys, tiny_llama_dir, corpus_file
):
    out = tmp_path / "run.json"
    result = _ppl(capsys, tiny_llama_dir, corpus_file, out, "--doc-tokens", "128")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Note:" not in result.stdout
    assert [len(c["detail"]["docs"]) for c in json.loads(out.read_text())["cells"]] == [2, 2]


def test_book_shorter_than_the_preset_doc_tokens_names_the_preset(tmp_path, capsys, tiny_llama_dir, book):
    out = tmp_path / "out" / "run.json"
    result = _ppl(capsys, tiny_llama_dir, book, out)
    fragments = [
        "only 0 of 1 documents",
        "--num-docs up to 2 from preset zoo",
        "--doc-tokens 8192 from preset zoo",
        "lower --doc-tokens",
    ]
    err = assert_error_after_progress(result, 2, *fragments)
    assert "--num-docs or" not in err  # fewer documents would not help: none qualifies


def test_an_explicit_num_docs_is_still_required_and_quoted(tmp_path, capsys, tiny_llama_dir, book):
    out = tmp_path / "out" / "run.json"
    result = _ppl(capsys, tiny_llama_dir, book, out, "--doc-tokens", "128", "--num-docs", "2")
    fragments = [
        "only 1 of 1 documents",
        "--num-docs 2 from the command line",
        "--doc-tokens 128 from the command line",
        "lower --num-docs or --doc-tokens",
    ]
    assert_error_after_progress(result, 2, *fragments)


def _longppl(capsys, tiny_llama_dir, dataset, output, *extra):
    return invoke(
        capsys, "ppl", "--model", tiny_llama_dir, "--dataset", dataset, *LONGPPL, "--output", output, *extra
    )


def test_longppl_names_the_preset_values_too_few_documents_had(tmp_path, capsys, tiny_llama_dir, book):
    result = _longppl(capsys, tiny_llama_dir, book, tmp_path / "out" / "run.json")
    fragments = [
        "only 0 of 1 documents",
        "--num-docs up to 2 from preset zoo",
        "--doc-tokens 8192 from preset zoo",
        "lower --doc-tokens",
    ]
    assert_error_after_progress(result, 2, *fragments)


def test_longppl_on_one_book_notes_the_fewer_documents(tmp_path, capsys, tiny_llama_dir, book):
    out = tmp_path / "run.json"
    result = _longppl(capsys, tiny_llama_dir, book, out, "--doc-tokens", "128")
    assert result.returncode == 0, result.stderr[-2000:]
    note = result.stdout.strip().splitlines()[-1]
    assert note.startswith("Note: 1 document(s) of") and "--num-docs 2 from preset zoo" in note, note
    assert [len(c["detail"]["docs"]) for c in json.loads(out.read_text())["cells"]] == [1, 1]


def test_the_ceiling_changes_the_identity_only_when_set():
    base = {"lengths": "32,64", "doc_tokens": 128, "num_docs": 2}
    exact = make_params(base).identity()
    ceiling = make_params({**base, "up_to_num_docs": True}).identity()
    assert "up_to_num_docs" not in exact  # an exact count's journals and results keep their identity
    assert ceiling == {**exact, "up_to_num_docs": True}
