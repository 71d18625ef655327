"""The RAG tasks under the exact protocol: every prompt is N minus the answer budget, chat on and off;
the demonstrations and the gold passage are whole and the gold's depth is recorded; HELMET's files are
read as HELMET picks from them; missing or malformed data is one line before any model loads."""

from __future__ import annotations

import json
import random

import pytest

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.data import Passage, QaRow, read_rows
from coca_eval.helmet.params import check_methods, make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from coca_eval.helmet.rag import choose_rows, is_gold
from tests.helmet.helmet_files import write_data_dir


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return write_data_dir(tmp_path_factory.mktemp("helmet-rag"), 3)


def _builder(tokenizer, data_dir, chat=None, samples=4):
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    ruler = ExactPromptBuilder(encode, tokenizer.bos_token_id, chat)
    return HelmetPromptBuilder(ruler, "exact", Sources(str(data_dir), 42, samples))


@pytest.mark.parametrize("task", ["kilt_nq", "kilt_popqa_3"])
@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_budget_with_the_gold_whole(
    task, with_chat, data_dir, ruler_tokenizer, chat_templates
):
    tokenizer = ruler_tokenizer("zoo")
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    for length in (3000, 5000):
        samples = _builder(tokenizer, data_dir, chat).build(task, length, 4, 42, length - 20)
        assert [len(s.ids) for s in samples] == [length - 20] * 4
        for sample in samples:
            text = tokenizer.decode(sample.ids, skip_special_tokens=True)
            place = text.rsplit("keeper of ", 1)[1].split("?")[0]
            assert f"The keeper of {place} is {sample.answers[0]}." in text  # the gold passage, whole
            assert text.count("\nAnswer: ") >= 2 + (not with_chat)  # two demonstrations answered
            (depth,) = sample.detail["depths"]
            assert 0 <= depth <= 1 and sample.detail["passages"] > 2


def test_gold_depths_are_drawn_per_sample(data_dir, ruler_tokenizer):
    samples = _builder(ruler_tokenizer("zoo"), data_dir, samples=8).build("kilt_nq", 6000, 8, 42, 5980)
    depths = [s.detail["depths"][0] for s in samples]
    assert len(set(depths)) == 8 and min(depths) < 0.3 and max(depths) > 0.7


def _helmets_pick(keys: list[str], samples: int, seed: int) -> set[str]:
    """HELMET's call sequence: the module-level generator seeded, then ``random.sample`` of the sorted
    keys (its state put back afterwards)."""
    state = random.getstate()
    try:
        random.seed(seed)
        return set(random.sample(sorted(keys), samples))
    finally:
        random.setstate(state)


@pytest.mark.parametrize("seed", [42, 7])
def test_helmets_questions_are_sampled_from_sorted_keys_and_kept_in_file_order(data_dir, tmp_path, seed):
    """The file's rows shuffled first, so file order, sorted order and the sampled order all differ:
    the chosen rows are those whose keys HELMET's sample of the sorted keys names, in the file's order."""
    lines = (data_dir / "kilt/nq-dev-multikilt_1000_k50_dep6.jsonl").read_text(encoding="utf-8").splitlines()
    random.Random(5).shuffle(lines)
    path = tmp_path / "shuffled.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    in_file = [json.loads(line)["id"] for line in lines]
    assert in_file != sorted(in_file)
    picked = _helmets_pick(in_file, 4, seed)
    chosen = choose_rows(read_rows(str(path), QaRow), 4, seed, by_id=True)
    assert [r.id for r in chosen] == [key for key in in_file if key in picked]


def test_a_gold_passage_is_the_files_mark_else_an_answer_found_after_normalisation():
    passage = Passage(title="T", text="The keeper of Lo is MI KA, they say.")
    assert is_gold(passage, ["Mi Ka!"])  # unmarked: found after normalisation (case, punctuation)
    assert not is_gold(passage, ["su ta"])
    assert not is_gold(passage.model_copy(update={"has_answer": False}), ["mi ka"])  # the mark wins
    assert is_gold(passage.model_copy(update={"has_answer": True}), ["su ta"])


def test_popqa_leaves_out_popular_subjects_and_the_question_from_its_demonstrations(
    data_dir, ruler_tokenizer
):
    samples = _builder(ruler_tokenizer("zoo"), data_dir, samples=20).build("kilt_popqa_3", 9000, 8, 42, 8980)
    tokenizer = ruler_tokenizer("zoo")
    rows = {r.question: r for r in read_rows(str(data_dir / "kilt/popqa_test_1000_k440_dep6.jsonl"), QaRow)}
    for sample in samples:
        text = tokenizer.decode(sample.ids)
        asked = "who is the keeper of " + text.rsplit("keeper of ", 1)[1].split("?")[0] + "?"
        assert rows[asked].s_pop < 1000
        assert text.count(asked) == 1  # never among its own demonstrations


def _params(data_dir, **values):
    return make_helmet_params(
        {"tasks": "kilt_nq", "lengths": "8k", "samples": 4, "data": str(data_dir), **values}
    )


def test_missing_data_is_one_line_naming_the_file_and_the_archive(tmp_path, data_dir):
    with pytest.raises(
        CocaEvalError, match=r"kilt_nq reads HELMET's kilt/nq-dev-multikilt_1000_k440_dep6.jsonl"
    ):
        check_methods(make_helmet_params({"tasks": "kilt_nq", "samples": 4}), [])
    with pytest.raises(CocaEvalError, match="data.tar.gz, unpack it, and pass --data"):
        check_methods(_params(tmp_path), [])
    check_methods(_params(data_dir), [])
    check_methods(_params(data_dir, protocol="helmet", lengths="8k,16k"), [])
    with pytest.raises(CocaEvalError, match="HELMET has no kilt_nq file for N = 4096"):
        check_methods(_params(data_dir, protocol="helmet", lengths="4k"), [])
    with pytest.raises(CocaEvalError, match="json_kv reads HELMET's json_kv/test_k105_dep6.jsonl"):
        check_methods(_params(data_dir, protocol="helmet", tasks="json_kv"), [])
    with pytest.raises(CocaEvalError, match="reads HELMET's ruler/niah_multivalue/validation_8192.jsonl"):
        check_methods(_params(data_dir, protocol="helmet", tasks="ruler_niah_mv"), [])


def test_a_malformed_file_is_one_line_naming_the_file_and_line(tmp_path):
    bad = write_data_dir(tmp_path / "bad", 3)
    path = bad / "kilt/nq-dev-multikilt_1000_k440_dep6.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = json.dumps({"question": "q", "answers": "not a list", "ctxs": []})
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CocaEvalError, match=r"k440_dep6.jsonl line 3: answers: Input should be a valid list"):
        check_methods(_params(bad), [])
    path.write_text("{not json\n")
    with pytest.raises(CocaEvalError, match=r"line 1: Expecting property name"):
        read_rows(str(path), QaRow)


def test_data_hub_unpacks_only_the_files_a_run_needs_from_helmets_archive(tmp_path, monkeypatch):
    """``--data hub``: the archive comes from huggingface_hub (here a small one in HELMET's layout), each
    needed member is written under the cache by its name; an archive that cannot be fetched is one line."""
    import tarfile

    source = write_data_dir(tmp_path / "src", 3)
    archive = tmp_path / "data.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source / "kilt", arcname="data/kilt")
    fetched = []
    monkeypatch.setenv("COCA_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda *a, **k: fetched.append(a) or str(archive))
    params = make_helmet_params({"tasks": "kilt_nq", "lengths": "8k", "samples": 4, "data": "hub"})
    check_methods(params, [])
    unpacked = sorted(p.name for p in (tmp_path / "cache" / "helmet-data" / "kilt").iterdir())
    assert unpacked == ["nq-dev-multikilt_1000_k440_dep6.jsonl", "nq-train-multikilt_1000_k3_dep6.jsonl"]
    assert fetched[0] == ("princeton-nlp/HELMET", "data.tar.gz")

    def offline(*args, **kwargs):
        raise ConnectionError("offline")

    monkeypatch.setattr("huggingface_hub.hf_hub_download", offline)
    with pytest.raises(CocaEvalError, match="could not be fetched .ConnectionError.; download and unpack it"):
        check_methods(make_helmet_params({**params.__dict__, "tasks": "kilt_triviaqa"}), [])
