"""The ICL tasks under the exact protocol: every prompt is N minus the answer budget, chat on and off,
HELMET's balanced demonstrations in order with only the last one cut; the labels are remapped per
question; the data come from --data files or the hub, and neither missing is more than one line."""

from __future__ import annotations

import hashlib
import random
import re

import pytest

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.icl import Example, label_mapping, load_icl_set, split_tenth
from coca_eval.helmet.params import check_methods, make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from tests.helmet.helmet_files import ICL_TASKS, icl_rows, write_icl_dir


@pytest.fixture(scope="module")
def icl_dir(tmp_path_factory):
    return write_icl_dir(tmp_path_factory.mktemp("icl"))


@pytest.mark.parametrize("task", ["icl_trec_coarse", "icl_nlu"])
@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_budget(task, with_chat, icl_dir, ruler_tokenizer, chat_templates):
    tokenizer = ruler_tokenizer("zoo")
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat), "exact", Sources(str(icl_dir), 42, 6)
    )
    for length in (1500, 4000):
        samples = builder.build(task, length, 6, 42, length - 20)
        assert [len(s.ids) for s in samples] == [length - 20] * 6
        for sample in samples:
            text = tokenizer.decode(sample.ids)
            items = text.split("\n\n")[1:-1]  # after the instruction, before the question
            last_whole = re.fullmatch(r"(?s).*\nlabel: \d+", items[-1]) is not None  # N may end on one
            assert sample.detail["shots"] == len(items) - (not last_whole)  # whole ones; only the last cut
            assert all(re.fullmatch(r"(?s)[^\n]+\nlabel: \d+", item) for item in items[:-1])


def _helmets_mapping(labels: int, seed: int) -> list[int]:
    """HELMET's call sequence for a question's labels: Python's module-level generator seeded, then
    ``range(labels)`` shuffled by it (its state put back afterwards)."""
    state = random.getstate()
    try:
        random.seed(seed)
        mapping = list(range(labels))
        random.shuffle(mapping)
        return mapping
    finally:
        random.setstate(state)


def test_a_label_mapping_is_helmets_shuffle_for_the_questions_seed():
    assert label_mapping(6, 1) == [2, 3, 5, 0, 4, 1]  # HELMET's shuffle for seed 1, as printed once
    for seed in (0, 2, 42, 2**31 - 1):
        assert label_mapping(68, seed) == _helmets_mapping(68, seed)


@pytest.mark.parametrize("task", ["icl_trec_coarse", "icl_nlu"])
def test_labels_are_remapped_per_question_and_balanced(task, icl_dir, ruler_tokenizer):
    """Every label a prompt shows, and its reference, is the true label of the text (read from the rows
    the fixture wrote) seen through that question's own mapping (HELMET's shuffle seeded by the sha256
    of the question's text plus the seed); the first round of demonstrations shows each label once."""
    field, labels, _ = ICL_TASKS[task]
    rows = [*icl_rows(task, 400, 1), *(icl_rows(task, 40, 2) if ICL_TASKS[task][2] else [])]
    truth: dict[str, set[int]] = {}
    for row in rows:
        truth.setdefault(row["text"], set()).add(row[field])
    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, None), "exact", Sources(str(icl_dir), 42, 6)
    )
    mappings = []
    for sample in builder.build(task, 4000, 6, 42, 3980):
        text = tokenizer.decode(sample.ids)
        parts = text.split("\n\n")
        question = parts[-1].removesuffix("\nlabel:")
        (true_label,) = truth[question]
        seed = (int(hashlib.sha256(question.encode("utf-8")).hexdigest(), 16) + 42) % 2**31
        mapping = _helmets_mapping(labels, seed)
        mappings.append(mapping)
        assert sample.answers == (str(mapping[true_label]),)
        shown = [re.fullmatch(r"(?s)([^\n]+)\nlabel: (\d+)", item) for item in parts[1:-1]]
        whole = [
            (m.group(1), int(m.group(2))) for m in shown if m is not None and len(truth[m.group(1)]) == 1
        ]
        assert len(whole) >= labels  # at least one whole round
        assert all(label == mapping[next(iter(truth[demo]))] for demo, label in whole)
        seen = [int(m.group(2)) for m in shown if m is not None]
        present = sorted(set(seen))  # every label of the training split (NLU's 90 % may lack one)
        assert len(present) >= labels - 1 and sorted(seen[: len(present)]) == present  # a round: each once
    assert len({tuple(m) for m in mappings}) > 1  # a mapping per question, not one for the task


@pytest.mark.parametrize("count", [403, 409])
def test_nlus_split_is_datasets_own_train_test_split_at_a_tenth(count):
    """NLU's one split cut as HELMET cuts it, ``train_test_split(test_size=0.1, seed)`` of ``datasets``
    itself, at row counts that are not a multiple of ten (a tenth rounded up to the test split)."""
    from datasets import Dataset

    rows = [Example(f"t{i}", i % 7) for i in range(count)]
    for seed in (1, 42):
        train, test = split_tenth(rows, seed)
        peer = Dataset.from_dict({"i": list(range(count))}).train_test_split(test_size=0.1, seed=seed)
        assert [e.text for e in test] == [f"t{i}" for i in peer["test"]["i"]]
        assert [e.text for e in train] == [f"t{i}" for i in peer["train"]["i"]]


def test_data_missing_from_data_dir_or_hub_is_one_line(tmp_path, icl_dir, monkeypatch):
    params = make_helmet_params(
        {"tasks": "icl_trec_coarse", "lengths": "8k", "samples": 4, "data": str(tmp_path)}
    )
    with pytest.raises(
        CocaEvalError, match="has no icl/icl_trec_coarse/train.jsonl and icl/icl_trec_coarse/test"
    ):
        check_methods(params, [])
    check_methods(
        make_helmet_params({"tasks": "icl_nlu", "lengths": "8k", "samples": 4, "data": str(icl_dir)}), []
    )

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr("datasets.load_dataset", offline)
    with pytest.raises(
        CocaEvalError, match=r"icl_banking77 reads PolyAI/banking77 from the hub, which failed"
    ):
        load_icl_set("icl_banking77", None, 4, 42)
