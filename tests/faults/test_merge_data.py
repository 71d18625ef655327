"""Issue 38 item 3: ``merge`` checks that its shards read the same data, and forged parts are one line.

Shard 1 on one version of a dataset and shards 2 and 3 on an edited one merged to a number that
matched neither; a shard file whose parts were edited (``tokens: -1023``, ``nll_sum: NaN``, strings,
no ``doc_id``, ``units: 0``) became a cell or a traceback. Each is now a one-line refusal, exit 2.
"""

from __future__ import annotations

import json

import pytest
from fault_cli import assert_one_line_error
from test_gate_cli import invoke

QUICK = ["--lengths", "32", "--stride", "32", "--doc-tokens", "128", "--num-docs", "3"]


def _shard(capsys, model, corpus, output, shard: str):
    args = ["ppl", "--model", model, "--dataset", corpus, *QUICK, "--output", output, "--shard", shard]
    result = invoke(capsys, *args)
    assert result.returncode == 0, result.stderr[-2000:]
    return output


def _edit(corpus, keep: set[str] = frozenset()):
    """Rewrite every document but those in ``keep`` (ids ``books:ROW``): a word put in front, so
    their first tokens change and their length hardly."""
    rows = [json.loads(line) for line in corpus.read_text().splitlines()]
    for index, row in enumerate(rows):
        if f"{corpus.stem}:{index}" not in keep:
            row["text"] = "Edited " + row["text"]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def corpus(tmp_path, corpus_file):
    copy = tmp_path / "books.jsonl"
    copy.write_text(corpus_file.read_text())
    return copy


@pytest.fixture
def shards(tmp_path, capsys, tiny_llama_dir, corpus):
    """The three shard files of one run on one version of the data."""
    return [_shard(capsys, tiny_llama_dir, corpus, tmp_path / f"s{k}.json", f"{k}/3") for k in (1, 2, 3)]


def _merge(capsys, tmp_path, paths):
    return invoke(capsys, "merge", *paths, "--output", tmp_path / "merged.json")


def test_shards_on_an_edited_dataset_are_refused_naming_the_documents(
    tmp_path, capsys, tiny_llama_dir, corpus
):
    first = _shard(capsys, tiny_llama_dir, corpus, tmp_path / "s1.json", "1/3")
    used = sorted(json.loads(first.read_text())["config"]["documents"])
    _edit(corpus)
    later = [_shard(capsys, tiny_llama_dir, corpus, tmp_path / f"s{k}.json", f"{k}/3") for k in (2, 3)]
    result = _merge(capsys, tmp_path, [first, *later])
    err = assert_one_line_error(result, 2, "read different data", "document_hashes differ for")
    assert any(repr(doc_id) in err for doc_id in used), err
    assert not (tmp_path / "merged.json").exists()


def test_shards_on_datasets_that_differ_outside_the_sample_are_refused(
    tmp_path, capsys, tiny_llama_dir, corpus, shards
):
    used = set()
    for path in shards:
        used |= set(json.loads(path.read_text())["config"]["documents"])
    _edit(corpus, keep=used)  # only documents no shard scored
    again = _shard(capsys, tiny_llama_dir, corpus, tmp_path / "s2-again.json", "2/3")
    result = _merge(capsys, tmp_path, [shards[0], again, shards[2]])
    assert_one_line_error(result, 2, "read different data (sha256:", "one version of the dataset")


def test_shards_on_one_dataset_still_merge(tmp_path, capsys, shards):
    result = _merge(capsys, tmp_path, shards)
    assert result.returncode == 0, result.stderr[-2000:]
    cell = json.loads((tmp_path / "merged.json").read_text())["cells"][0]
    assert cell["status"] == "ok" and cell["n"] == 3 * 127
    assert "document_hashes" not in cell["detail"]  # checked, not kept in the cell


def _forge_part(field: str, value):
    def forge(detail):
        part = next(iter(detail["parts"].values()))
        if value is KeyError:
            del part[field]
        else:
            part[field] = value

    return forge


def _forge_units(value):
    def forge(detail):
        detail["units"] = value

    return forge


def _forge_part_index(detail):
    detail["parts"]["7"] = next(iter(detail["parts"].values()))


FORGED = {  # case: (how the first cell of shard 1 is edited, what the one line names, in every shard)
    "negative tokens": (_forge_part("tokens", -1023), "greater than or equal to 1", False),
    "NaN nll_sum": (_forge_part("nll_sum", float("nan")), "finite number", False),
    "string nll_sum": (_forge_part("nll_sum", "12.5"), "valid number", False),
    "string tokens": (_forge_part("tokens", "127"), "valid integer", False),
    "negative nll_sum": (_forge_part("nll_sum", -50.0), "below zero", False),
    "no doc_id": (_forge_part("doc_id", KeyError), "doc_id", False),
    "zero units": (_forge_units(0), "units: Input should be greater than or equal to 1", True),
    "a part past the units": (_forge_part_index, "part 7 is not one of the cell's 3 units", False),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_forged_part_is_one_line(tmp_path, capsys, shards, case):
    forge, named, every = FORGED[case]
    for path in shards if every else shards[:1]:
        raw = json.loads(path.read_text())
        forge(raw["cells"][0]["detail"])
        path.write_text(json.dumps(raw))  # json writes NaN as the bare token NaN, as a hand edit would
    result = _merge(capsys, tmp_path, shards)
    assert_one_line_error(result, 2, named)
    assert not (tmp_path / "merged.json").exists()
