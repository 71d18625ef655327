"""HELMET's long-QA and summarisation prompts: the text HELMET's own loaders build from the files of
``long_files.py`` (``data/helmet_long_values.json``, made outside the project by
``scripts/helmet_long_values.py``) is ours, sample by sample, the same questions in the same order with
the same demonstrations; both protocols build prompts of these tasks at their lengths."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet import long
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources, helmet_data
from coca_eval.helmet.tasks import HELMET_GROUPS, HELMET_TASKS
from tests.helmet.long_files import write_long_dir

HELMET = json.loads((Path(__file__).parent / "data" / "helmet_long_values.json").read_text(encoding="utf-8"))
TASKS = ("narrativeqa", "infbench_qa", "infbench_choice", "infbench_sum", "multi_lexsum")
HELMET_SHOTS = {"narrativeqa": 0, "multi_lexsum": 0}  # their demonstrations are unseeded in HELMET


@pytest.fixture(scope="module")
def long_dir(tmp_path_factory) -> Path:
    return write_long_dir(tmp_path_factory.mktemp("helmet-long"))


def test_the_reference_comes_from_the_commit_the_docs_name():
    assert HELMET["helmet_commit"] == "4526dfbdc512bd9ff721da336bff4e3e75ecfd27"
    assert sorted(HELMET["prompts"]) == sorted(TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_prompt_text_equals_helmets(task, long_dir):
    data = long.load_long_set(task, str(long_dir), HELMET["samples"], 42, HELMET_SHOTS.get(task, 2))
    template, prefix = long.LAYOUTS[task]
    theirs = HELMET["prompts"][task]
    assert len(data.items) == len(theirs) == HELMET["samples"]
    for item, reference in zip(data.items, theirs, strict=True):
        assert (template + "\n" + prefix).format(**item.fields) == reference["prompt"]
        user = template.format(**item.fields)
        assert hashlib.sha256(user.encode()).hexdigest() == reference["user"]["sha256"]
        answers = reference["answers"]
        assert list(item.answers) == ([answers] if isinstance(answers, str) else answers)


def test_infbench_demonstrations_are_other_rows(long_dir):
    data = long.load_long_set("infbench_qa", str(long_dir), 4, 42, 2)
    for item in data.items:
        demo = item.fields["demo"]
        assert demo.startswith("For example:\n\n[story text]\nQuestion: ") and demo.count("[story text]") == 2
        assert f"Question: {item.fields['question']}\n" not in demo


def test_narrativeqa_demonstrations_are_seeded_training_questions(long_dir):
    first = long.load_long_set("narrativeqa", str(long_dir), 4, 42, 2)
    long.load_long_set.cache_clear()
    again = long.load_long_set("narrativeqa", str(long_dir), 4, 42, 2)
    assert first == again
    train = [json.loads(x)["question"]["text"] for x in (long_dir / "narrativeqa" / "train.jsonl").open()]
    demo = first.items[0].fields["demo"]
    assert sum(f"Question: {q}\n" in demo for q in train) == 2
    assert demo.endswith("\n\nNow, use the following story to answer the question:\n\n")


def _builder(tokenizer, protocol, root, samples=3):
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    exact = ExactPromptBuilder(encode, tokenizer.bos_token_id, None)
    return HelmetPromptBuilder(exact, protocol, Sources(str(root), 42, samples), tokenizer, None)


@pytest.fixture(scope="module")
def long_docs(tmp_path_factory) -> Path:
    return write_long_dir(tmp_path_factory.mktemp("helmet-long-docs"), 400)


@pytest.mark.parametrize("task", TASKS)
def test_exact_prompts_are_n_minus_the_budget_and_helmet_cuts_the_document(task, long_docs, ruler_tokenizer):
    tokenizer = ruler_tokenizer("zoo")
    budget = HELMET_TASKS.get(task).answer_budget
    exact = _builder(tokenizer, "exact", long_docs).build(task, 3000, 3, 42, 3000 - budget)
    assert [len(s.ids) for s in exact] == [3000 - budget] * 3
    helmet = _builder(tokenizer, "helmet", long_docs).build(task, 8192, 3, 42, 8192 - budget)
    assert all(len(s.ids) <= 8192 - budget and s.detail["truncated_tokens"] > 0 for s in helmet)
    ending = long.LAYOUTS[task][1].split("\n")[-1]
    assert tokenizer.decode(helmet[0].ids, skip_special_tokens=True).endswith("\n" + ending)


def test_helmet_protocol_refuses_a_length_helmet_never_runs(long_dir):
    with pytest.raises(CocaEvalError, match="8k, 16k, 32k, 64k and 128k"):
        helmet_data(HELMET_TASKS.get("infbench_qa"), Sources(str(long_dir), 42, 2), 5000)


def test_a_missing_file_is_one_line_naming_it(tmp_path):
    with pytest.raises(
        CocaEvalError, match="infbench/longbook_choice_eng.jsonl under --data .* does not exist"
    ):
        long.load_long_set("infbench_choice", str(tmp_path), 2, 42, 2)


def test_asking_more_questions_than_the_file_holds_is_an_error(long_dir):
    data = long.load_long_set("multi_lexsum", str(long_dir), 100, 42, 0)
    assert len(data.items) == 6  # the row without a short summary is left out, as HELMET filters it
    with pytest.raises(CocaEvalError, match="holds 6 questions"):
        data.item(6)


def test_the_categories_group_their_tasks():
    assert HELMET_GROUPS["longqa"] == ("narrativeqa", "infbench_qa", "infbench_choice")
    assert HELMET_GROUPS["summ"] == ("infbench_sum", "multi_lexsum")
    assert [HELMET_TASKS.get(t).judged for t in TASKS] == ["gpt-4-score", "", "", "gpt-4-f1", "gpt-4-f1"]


def test_without_rouge_score_the_tasks_are_refused_before_a_model_loads(long_dir, monkeypatch):
    import sys

    from coca_eval.helmet import scoring
    from coca_eval.helmet.params import check_methods, make_helmet_params

    params = make_helmet_params(
        {"tasks": "infbench_qa", "lengths": "8k", "samples": 2, "data": str(long_dir)}
    )
    check_methods(params, [])  # with the scorer installed
    scoring._rouge_scorer.cache_clear()
    monkeypatch.setitem(sys.modules, "rouge_score", None)
    try:
        with pytest.raises(CocaEvalError, match=r"pip install 'coca-eval\[helmet\]'"):
            check_methods(params, [])
    finally:
        scoring._rouge_scorer.cache_clear()
