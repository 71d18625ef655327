"""Local document sources and the paper's sampling rule."""

import json

import pandas as pd
import pytest

from coca_eval.data.documents import Document
from coca_eval.data.sampling import leading_tokens, sample_documents
from coca_eval.data.sources import load_documents, source_fingerprint
from coca_eval.errors import CocaEvalError


def encode_words(text):
    return [len(w) for w in text.split()]


def test_txt_jsonl_parquet_and_directories(tmp_path):
    (tmp_path / "a.txt").write_text("one two three")
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"text": "four"}) + "\n\n" + json.dumps({"text": "five six"}) + "\n"
    )
    pd.DataFrame({"text": ["seven", "eight nine"]}).to_parquet(tmp_path / "c.parquet")
    (tmp_path / "ignored.csv").write_text("text\nnot read")
    docs = load_documents(str(tmp_path))
    assert [d.text for d in docs] == ["one two three", "four", "five six", "seven", "eight nine"]
    assert [d.doc_id for d in docs][:2] == ["a", "b:0"]
    assert load_documents(str(tmp_path / "b.jsonl"))[1].text == "five six"


def test_text_field_and_bad_files(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"body": "hello"}) + "\n")
    assert load_documents(str(path), text_field="body")[0].text == "hello"
    with pytest.raises(CocaEvalError, match="cannot read"):
        load_documents(str(path))  # no "text" field
    path.write_text("{not json\n")
    with pytest.raises(CocaEvalError, match="cannot read"):
        load_documents(str(path))
    with pytest.raises(CocaEvalError, match="dataset not found"):
        load_documents(str(tmp_path / "missing.txt"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CocaEvalError, match="no documents"):
        load_documents(str(tmp_path / "empty"))


def test_hub_loader_reads_a_datasets_repo_layout(tmp_path):
    """``hf:ID`` goes through ``datasets.load_dataset``; a local repo layout stands in for the hub here."""
    (tmp_path / "data").mkdir()
    pd.DataFrame({"text": ["a b c", "d e"], "short_book_title": ["A", "D"]}).to_parquet(
        tmp_path / "data" / "test-00000-of-00001.parquet"
    )
    docs = load_documents(f"hf:{tmp_path}")
    assert [(d.text, d.title) for d in docs] == [("a b c", "A"), ("d e", "D")]
    with pytest.raises(CocaEvalError, match="cannot load dataset"):
        load_documents(f"hf:{tmp_path}:validation")


def test_local_fingerprint_follows_content_changes(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("one")
    first = source_fingerprint(str(path))
    path.write_text("one two")
    assert source_fingerprint(str(path)) != first
    assert source_fingerprint("embedded") == "embedded"


def test_sampling_is_seeded_filters_short_docs_and_truncates():
    docs = [Document(f"d{i}", " ".join(["word"] * (50 + 40 * i))) for i in range(10)]
    first = sample_documents(docs, encode_words, num_docs=4, doc_tokens=200, seed=3)
    assert first == sample_documents(docs, encode_words, num_docs=4, doc_tokens=200, seed=3)
    assert first != sample_documents(docs, encode_words, num_docs=4, doc_tokens=200, seed=4)
    assert all(len(d.ids) == 200 for d in first)
    assert {d.doc_id for d in first} <= {f"d{i}" for i in range(4, 10)}  # only docs with >= 200 tokens
    everything = sample_documents(docs, encode_words, num_docs=None, doc_tokens=200, seed=0)
    assert sorted(d.doc_id for d in everything) == sorted(f"d{i}" for i in range(4, 10))
    with pytest.raises(CocaEvalError, match="only 6 of 10"):
        sample_documents(docs, encode_words, num_docs=7, doc_tokens=200, seed=0)


def test_leading_tokens_equals_full_tokenization_prefix():
    from tiny_models import make_tokenizer, tiny_corpus_text

    tokenizer = make_tokenizer(add_bos=False)
    text = tiny_corpus_text(n_docs=1, words_per_doc=4000)[0]
    full = tokenizer(text, add_special_tokens=False).input_ids
    encode = lambda t: tokenizer(t, add_special_tokens=False).input_ids  # noqa: E731
    assert leading_tokens(text, encode, 1000) == full[:1000]
    assert leading_tokens(text, encode, len(full)) == full
    assert leading_tokens(text, encode, len(full) + 1) is None
