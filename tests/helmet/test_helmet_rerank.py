"""Re-ranking under the exact protocol: every prompt is N minus the budget, chat on and off; the
relevant passages are whole and the references are the passages shown; the ideal ranking scores NDCG@10
of 1 and an empty answer 0 through a whole run."""

from __future__ import annotations

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.chat import chat_frame
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.helmet.params import make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from coca_eval.helmet.scoring import score_answer
from coca_eval.helmet.tasks import HELMET_TASKS
from coca_eval.methods import make_method
from tests.helmet.helmet_files import write_rerank_dir
from tests.ruler.scripted_backend import MODE

TASK = "msmarco_rerank_psg"


@pytest.fixture(scope="module")
def rerank_dir(tmp_path_factory):
    return write_rerank_dir(tmp_path_factory.mktemp("rerank"))


@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_budget_with_the_relevant_passages_whole(
    with_chat, rerank_dir, ruler_tokenizer, chat_templates
):
    tokenizer = ruler_tokenizer("zoo")
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat), "exact", Sources(str(rerank_dir), 42, 4)
    )
    for length in (3000, 6000):
        for sample in builder.build(TASK, length, 4, 42, length - 200):
            assert len(sample.ids) == length - 200
            text = tokenizer.decode(sample.ids)
            shown = [a.rsplit(":", 1) for a in sample.answers]
            assert len(shown) == sample.detail["passages"]
            for pid, label in shown:
                if int(label) > 0:  # whole: its ID and the whole of its document line
                    assert f"[ID: {pid}] Document (Title: " in text
            assert [int(label) for _, label in shown] == sorted(
                (int(label) for _, label in shown), reverse=True
            )


def test_the_ideal_ranking_scores_one_and_a_wrong_one_less():
    task = HELMET_TASKS.get(TASK)
    refs = ("7:3", "2:1", "9:0", "4:0")
    assert score_answer(task, "7 > 2 > 9 > 4", refs)["score"] == 1.0
    assert score_answer(task, "[9] > [4] > [2] > [7]", refs)["score"] < 0.6
    assert score_answer(task, "", refs)["score"] == 0.0


@pytest.mark.usefixtures("scripted")
def test_a_run_scores_the_ideal_ranking_one_and_nothing_zero(tmp_path, rerank_dir):
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    values = {"tasks": TASK, "lengths": "3000", "samples": 3, "data": str(rerank_dir)}
    run = evaluate("helmet", [method], make_helmet_params(values), tmp_path / "r.json", Runtime())
    (cell,) = run.cells
    assert cell.status == "ok" and cell.value == 100.0 and cell.detail["category"] == "Re-rank"
    MODE["answer"] = "empty"
    run = evaluate("helmet", [method], make_helmet_params(values), tmp_path / "e.json", Runtime())
    assert run.cells[0].value == 0.0
