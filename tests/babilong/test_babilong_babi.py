"""bAbI files: the format read into single-question samples as BABILong reads it, and our qa1-qa3
generator's answers checked by replaying every story independently (a world rebuilt from the sentences
alone), for many stories."""

from __future__ import annotations

import re

import pytest

from coca_eval.babilong.babi import generate_babi, parse_babi
from coca_eval.babilong.data import babi_samples
from coca_eval.babilong.params import check_methods, make_babilong_params
from coca_eval.errors import CocaEvalError

MOVE = re.compile(r"^(\w+) (?:moved|went|journeyed|travelled|went back) to the (\w+)\.$")
TAKE = re.compile(r"^(\w+) (?:got|picked up|grabbed|took) the (\w+) there\.$")
DROP = re.compile(r"^(\w+) (?:dropped|discarded|put down|left) the (\w+)\.$")


def _replay(facts):
    """Rooms of people, and every room each object was in, in order, from the sentences alone."""
    person_room, holder, object_rooms = {}, {}, {}
    for fact in facts:
        if m := MOVE.match(fact):
            person_room[m[1]] = m[2]
            for item, who in holder.items():
                if who == m[1]:
                    object_rooms[item].append(m[2])
        elif m := TAKE.match(fact):
            assert holder.get(m[2]) is None, fact  # nobody holds what is taken
            rooms = object_rooms.setdefault(m[2], [])
            assert not rooms or rooms[-1] == person_room[m[1]], fact  # taken where it lies
            holder[m[2]] = m[1]
            rooms.append(person_room[m[1]])
        elif m := DROP.match(fact):
            assert holder.get(m[2]) == m[1], fact
            holder[m[2]] = None
        else:
            raise AssertionError(f"not bAbI's grammar: {fact}")
    return person_room, object_rooms


def _answer(question, facts):
    person_room, object_rooms = _replay(facts)
    if m := re.match(r"^Where is (\w+)\?$", question):
        return person_room[m[1]]
    if m := re.match(r"^Where is the (\w+)\?$", question):
        return object_rooms[m[1]][-1]
    m = re.match(r"^Where was the (\w+) before the (\w+)\?$", question)
    rooms = [r for i, r in enumerate(object_rooms[m[1]]) if i == 0 or r != object_rooms[m[1]][i - 1]]
    assert rooms[-1] == m[2], question
    return rooms[-2]


@pytest.mark.parametrize("task", ["qa1", "qa2", "qa3"])
def test_every_generated_answer_is_what_the_story_says(task):
    samples = parse_babi(generate_babi(task, 60, 7))
    assert len(samples) > 100
    for sample in samples:
        assert _answer(sample.question, sample.facts) == sample.answer, sample
        assert all(0 <= i < len(sample.facts) for i in sample.supporting)
    assert parse_babi(generate_babi(task, 5, 7)) == parse_babi(generate_babi(task, 5, 7))
    assert parse_babi(generate_babi(task, 5, 7)) != parse_babi(generate_babi(task, 5, 8))


def test_a_story_with_several_questions_becomes_one_sample_per_question():
    text = (
        "1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n3 John moved to the office.\n"
        "4 Where is John?\toffice\t3\n1 Sandra went to the garden.\n2 Where is Sandra?\tgarden\t1\n"
    )
    first, second, third = parse_babi(text)
    assert first.facts == ("Mary went to the kitchen.",) and first.answer == "kitchen"
    assert second.facts == ("Mary went to the kitchen.", "John moved to the office.")  # no earlier question
    assert second.supporting == (1,) and third.facts == ("Sandra went to the garden.",)
    assert (first.story, second.story, third.story) == (0, 0, 1)  # a line numbered 1 starts story 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Mary went home.\n", "line 1: not a numbered bAbI line"),
        ("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\n", "line 2: a question needs"),
        ("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t7\n", "line 2: a supporting fact"),
        ("1 Mary went to the kitchen.\n", "holds no questions"),
    ],
)
def test_a_malformed_file_is_one_line(text, message):
    with pytest.raises(CocaEvalError, match=message):
        parse_babi(text)


def test_babi_data_hub_unpacks_only_the_tasks_a_run_needs(tmp_path, monkeypatch):
    """``--babi-data hub``: bAbI's archive comes from huggingface_hub (here a small one in its layout);
    only the English test file of each task asked for is written, under the cache; an archive that
    cannot be fetched is one line naming the remedy."""
    import tarfile

    folder = tmp_path / "tasks_1-20_v1-2" / "en"
    folder.mkdir(parents=True)
    for name in ("qa1_single-supporting-fact", "qa10_indefinite-knowledge", "qa4_two-arg-relations"):
        for split in ("train", "test"):
            story = f"1 Mary went to the {split}.\n2 Where is Mary?\t{split}\t1\n"
            (folder / f"{name}_{split}.txt").write_text(story)
    archive = tmp_path / "tasks_1-20_v1-2.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "tasks_1-20_v1-2", arcname="tasks_1-20_v1-2")
    fetched = []
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda *a, **k: fetched.append(a) or str(archive))
    (tmp_path / "book.txt").write_text("A short book. It has two sentences.")
    values = {"tasks": "qa1,qa4", "lengths": "1k", "babi_data": "hub", "haystack": str(tmp_path / "book.txt")}
    params = make_babilong_params(values)
    check_methods(params, [])
    assert sorted(p.name for p in (tmp_path / "cache" / "babi").iterdir()) == ["qa1_test.txt", "qa4_test.txt"]
    assert babi_samples("qa1", "hub", 0)[0].answer == "test"  # the test split, not qa10's or train's
    assert fetched[0] == ("facebook/babi_qa", "data/tasks_1-20_v1-2.tar.gz")
    assert params.identity()["babi_data"] == "hub"  # a name, not a path to fingerprint

    def offline(*args, **kwargs):
        raise ConnectionError("offline")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", offline)
    babi_samples.cache_clear()
    with pytest.raises(CocaEvalError, match=r"could not be fetched \(ConnectionError\); download tasks_1-20"):
        babi_samples("qa5", "hub", 0)


def test_data_names_a_hub_dataset_or_a_folder(tmp_path, monkeypatch):
    """``--data owner/name`` reads that hub dataset (BABILong's 100-sample sets), by config per length
    and split per task; a folder is read as a folder; a length is named as BABILong names it."""
    from coca_eval.babilong.data import babilong_rows, hub_dataset, split_name

    loaded = []

    def load_dataset(hub_id, name, split):
        loaded.append((hub_id, name, split))
        return [{"input": "Mary went to the office.", "question": "Where is Mary?", "target": "office"}]

    monkeypatch.setattr("datasets.load_dataset", load_dataset)
    params = make_babilong_params(
        {"tasks": "qa1", "lengths": "0k,1m", "source": "babilong", "data": "RMT-team/babilong"}
    )
    check_methods(params, [])
    assert loaded == [("RMT-team/babilong", "0k", "qa1"), ("RMT-team/babilong", "1M", "qa1")]
    assert params.identity()["data"] == "RMT-team/babilong"
    assert hub_dataset(None) == "RMT-team/babilong-1k-samples" and hub_dataset(str(tmp_path)) is None
    assert [split_name(n) for n in (0, 2048, 131072)] == ["0k", "2k", "128k"]
    with pytest.raises(CocaEvalError, match="--data no/such-dir/x: no such file or directory"):
        make_babilong_params({"tasks": "qa1", "lengths": "1k", "source": "babilong", "data": "no/such-dir/x"})
    babilong_rows.cache_clear()
