"""QA data (SQuAD v2, HotpotQA) from local files in their own formats or from the hub's rows, and QA
prompts: gold documents among distractors, the article's own paragraphs first, questions fixed by seed."""

from __future__ import annotations

import json
import re

import pytest
from qa_files import hotpot_hub_rows, hotpot_json, squad_hub_rows, squad_json, write_qa_dir

from coca_eval.errors import CocaEvalError
from coca_eval.ruler import qa_data
from coca_eval.ruler.prompts import RulerPromptBuilder
from coca_eval.ruler.qa_data import load_qa


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_squad_file_and_hub_rows_read_alike_without_unanswerable_questions(tmp_path):
    data = squad_json()
    (tmp_path / "squad.json").write_text(json.dumps(data), encoding="utf-8")
    from_file = load_qa("squad", str(tmp_path / "squad.json"))
    from_rows = load_qa("squad", str(jsonl(tmp_path / "rows.jsonl", squad_hub_rows(data))))
    assert from_file.documents == from_rows.documents and from_file.questions == from_rows.questions
    assert len(from_file.documents) == 20 and len(from_file.questions) == 20  # 20 unanswerable left out
    first = from_file.questions[0]
    assert first.query == "Which animal is article 0 paragraph 0 about?"
    assert first.answers == ("otter00", "OTTER00")
    paragraphs = [p["context"] for p in data["data"][0]["paragraphs"]]
    assert from_file.documents[first.gold[0]] == paragraphs[0]
    assert sorted(from_file.documents[i] for i in first.related) == sorted(paragraphs[1:])
    assert from_file.name == f"SQuAD v2 ({tmp_path / 'squad.json'})"


def test_hotpot_file_and_hub_rows_read_alike(tmp_path):
    rows = hotpot_json()
    (tmp_path / "hotpot.json").write_text(json.dumps(rows), encoding="utf-8")
    from_file = load_qa("hotpotqa", str(tmp_path / "hotpot.json"))
    from_rows = load_qa("hotpotqa", str(jsonl(tmp_path / "rows.jsonl", hotpot_hub_rows(rows))))
    assert from_file.documents == from_rows.documents and from_file.questions == from_rows.questions
    q = from_file.questions[3]
    assert q.answers == ("lynx-3",) and len(q.gold) == 4 and q.related == ()
    title, sentences = rows[3]["context"][0]
    assert from_file.documents[q.gold[0]] == f"{title}\n{''.join(sentences)}"


def test_the_hub_is_read_through_datasets_with_rulers_dev_sets(monkeypatch):
    import datasets

    calls = []

    def fake_load(hub_id, config, split):
        calls.append((hub_id, config, split))
        rows = squad_hub_rows(squad_json()) if "squad" in hub_id else hotpot_hub_rows(hotpot_json())
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    qa_data._from_hub.cache_clear()
    try:
        squad, hotpot = load_qa("squad", None), load_qa("hotpotqa", None)
    finally:
        qa_data._from_hub.cache_clear()
    assert calls == [
        ("rajpurkar/squad_v2", None, "validation"),
        ("hotpotqa/hotpot_qa", "distractor", "validation"),
    ]
    assert len(squad.questions) == 20 and len(hotpot.questions) == 10
    assert squad.name == "SQuAD v2 (hub:rajpurkar/squad_v2:validation)"


def test_hub_failure_is_one_line(monkeypatch):
    import datasets

    def offline(*args, **kwargs):
        raise ConnectionError("no route to host\nmore detail")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    qa_data._from_hub.cache_clear()
    with pytest.raises(
        CocaEvalError, match=r"cannot load rajpurkar/squad_v2 \(validation\): no route to host \(or"
    ):
        load_qa("squad", None)
    qa_data._from_hub.cache_clear()


def test_qa_data_errors(tmp_path):
    only_squad = tmp_path / "only"
    only_squad.mkdir()
    (only_squad / "squad.json").write_text(json.dumps(squad_json()), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CocaEvalError, match="no HotpotQA questions in .*only"):
        load_qa("hotpotqa", str(only_squad))
    with pytest.raises(CocaEvalError, match="QA data not found"):
        load_qa("squad", str(tmp_path / "missing"))
    with pytest.raises(CocaEvalError, match="cannot read QA data .*broken.json: JSONDecodeError"):
        load_qa("squad", str(tmp_path / "broken.json"))


def builder(tokenizer, qa_dir) -> RulerPromptBuilder:
    return RulerPromptBuilder(
        lambda t: tokenizer(t, add_special_tokens=False).input_ids, None, None, qa_data=qa_dir
    )


@pytest.mark.realmodel
def test_squad_distractors_are_the_articles_own_paragraphs_first(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("smollm2")
    folder = str(write_qa_dir(tmp_path / "qa"))
    qa = load_qa("squad", folder)
    for sample in builder(tokenizer, folder).build("qa_1", 350, 4, seed=0):  # room for 3-4 documents
        text = tokenizer.decode(sample.ids)
        question = next(q for q in qa.questions if q.answers == sample.answers)
        present = [i for i, doc in enumerate(qa.documents) if doc in text]
        assert question.gold[0] in present and text.count(qa.documents[question.gold[0]]) == 1
        assert set(present) - set(question.gold) <= set(question.related)  # only its article's paragraphs
        assert len(present) == sample.detail["documents"] >= 2


def test_questions_follow_the_seed_and_are_the_same_at_every_length(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    folder = str(write_qa_dir(tmp_path / "qa"))
    b = builder(tokenizer, folder)
    at = {n: [s.answers for s in b.build("qa_2", n, 5, seed=1)] for n in (2048, 4096)}
    assert at[2048] == at[4096] and len(set(at[2048])) == 5
    assert [s.answers for s in b.build("qa_2", 2048, 5, seed=2)] != at[2048]
    first, again = b.build("qa_2", 2048, 2, seed=1), builder(tokenizer, folder).build("qa_2", 2048, 2, seed=1)
    assert first == again


def test_a_question_whose_gold_documents_do_not_fit_is_redrawn_and_recorded(ruler_tokenizer, tmp_path):
    tokenizer = ruler_tokenizer("zoo")
    rows = hotpot_json(questions=30)
    for i, row in enumerate(rows):  # every other question's gold documents are three times as long
        if i % 2:
            row["context"] = [[t, s * 3] for t, s in row["context"]]
    (tmp_path / "hotpot.json").write_text(json.dumps(rows), encoding="utf-8")
    long_gold = {row["answer"] for i, row in enumerate(rows) if i % 2}
    b = builder(tokenizer, str(tmp_path / "hotpot.json"))
    drawn = {}
    for n in (900, 3000):  # gold documents take about 400 or 900 of the zoo's tokens
        samples = b.build("qa_2", n, 12, seed=0)
        assert all(len(s.ids) == n for s in samples)
        drawn[n] = [(s.answers[0], s.detail["redraws"]) for s in samples]
    assert all(r == 0 for _, r in drawn[3000]) and any(a in long_gold for a, _ in drawn[3000])
    assert all(a not in long_gold for a, _ in drawn[900]) and any(r > 0 for _, r in drawn[900])
    for (wide, _), narrow in zip(drawn[3000], drawn[900], strict=True):  # short questions stay in place
        assert wide in long_gold or narrow == (wide, 0)
    with pytest.raises(
        CocaEvalError, match=r"qa_2: .*gold document\(s\): \d+ more needed \(and for 50 other"
    ):
        b.build("qa_2", 400, 1, seed=0)


def _squad_with(change) -> dict:
    data = squad_json()
    change(data["data"][1]["paragraphs"][0])
    return data


def _hotpot_with(change) -> list[dict]:
    rows = hotpot_json()
    change(rows[2])
    return rows


MALFORMED = {
    "squad without qas": ("squad", _squad_with(lambda p: p.pop("qas")), "record 1 .* paragraphs.0.qas"),
    "paragraphs as strings": (
        "squad",
        {"data": [{"title": "A", "paragraphs": ["text"]}]},
        "record 0 .* paragraphs.0",
    ),
    "answers as strings": (
        "squad",
        _squad_with(lambda p: p["qas"][0].update(answers=["otter"])),
        r"qas.0.answers.0",
    ),
    "answers without text": (
        "squad",
        _squad_with(lambda p: p["qas"][0].update(answers=[{"answer_start": 0}])),
        r"answers.0.text",
    ),
    "title as a list": ("squad", {"data": [{"title": ["A"], "paragraphs": []}]}, "record 0 .* title"),
    "a null question": ("squad", _squad_with(lambda p: p["qas"][0].update(question=None)), "qas.0.question"),
    "context as an int": ("squad", _squad_with(lambda p: p.update(context=3)), "paragraphs.0.context"),
    "an int answer": ("squad", _squad_with(lambda p: p["qas"][0]["answers"][0].update(text=7)), "text"),
    "hub row without question": ("squad", [{"context": "c", "answers": {"text": ["a"]}, "title": "t"}], None),
    "bad supporting facts": (
        "hotpotqa",
        _hotpot_with(lambda r: r.update(supporting_facts=[["Title", "one"]])),
        "supporting_facts",
    ),
    "answer as a list": (
        "hotpotqa",
        _hotpot_with(lambda r: r.update(answer=["a", "b"])),
        "record 2 .* answer",
    ),
    "a null answer": ("hotpotqa", _hotpot_with(lambda r: r.update(answer=None)), "record 2 .* answer"),
    "paragraph not a pair": ("hotpotqa", _hotpot_with(lambda r: r.update(context=[["T"]])), "context"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_qa_file_is_one_line_naming_the_file_and_record(tmp_path, case):
    """Each record is read through its format's model before any model loads: a malformed one is a
    one-line error naming the file, the record and the field, never a traceback or a late failure."""
    dataset, data, where = MALFORMED[case]
    path = tmp_path / ("rows.jsonl" if case.startswith("hub") else "dev.json")
    text = "".join(json.dumps(r) + "\n" for r in data) if path.suffix == ".jsonl" else json.dumps(data)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CocaEvalError) as caught:
        load_qa(dataset, str(path))
    message = str(caught.value)
    assert "\n" not in message and str(path) in message, message
    assert re.search(where or "record 0 .* question", message), message


def test_a_malformed_qa_file_is_refused_before_any_model_loads(tmp_path):
    from tests.test_cli import run_cli

    path = tmp_path / "dev.json"
    path.write_text(json.dumps(_squad_with(lambda p: p["qas"][0].update(question=None))), encoding="utf-8")
    result = run_cli("ruler", "--model", "/nonexistent/model", "--tasks", "qa_1", "--lengths", "4096",
                     "--qa-data", str(path))  # fmt: skip
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "record 1" in result.stderr and "qas.0.question" in result.stderr
