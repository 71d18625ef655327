"""The ICL tasks under the exact protocol: every prompt is N minus the answer budget, chat on and off,
HELMET's balanced demonstrations in order with only the last one cut; the labels are remapped per
question; the data come from --data files or the hub, and neither missing is more than one line."""

from __future__ import annotations

import re

import pytest

from coca_eval.chat import chat_frame
from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.icl import Example, balanced_rounds, label_mapping, load_icl_set
from coca_eval.helmet.params import check_methods, make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from tests.helmet.helmet_files import write_icl_dir


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


def test_labels_are_remapped_per_question_and_balanced():
    assert label_mapping(6, 1) != label_mapping(6, 2) and sorted(label_mapping(6, 1)) == list(range(6))
    data = [Example(f"t{i}", i % 3) for i in range(30)]
    first_round = balanced_rounds(data, 3, 5)
    assert sorted(e.label for e in first_round) == [0, 1, 2]
    assert len(balanced_rounds(data, 7, 5)) == 7 and balanced_rounds(data, 7, 5) == balanced_rounds(
        data, 7, 5
    )


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
