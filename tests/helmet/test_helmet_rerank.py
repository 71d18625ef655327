"""Re-ranking under the exact protocol: every prompt is N minus the budget, chat on and off; the
relevant passages are whole and the references are the passages shown; the ideal ranking scores NDCG@10
of 1 and an empty answer 0 through a whole run."""

from __future__ import annotations

import json

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


def _file_rows(rerank_dir) -> dict[str, dict]:
    """The exact protocol's file (HELMET's k = 600), read here as plain JSON: query text -> row."""
    path = rerank_dir / "msmarco" / "test_reranking_data_k600_dep3.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["query"]: row for row in rows}


@pytest.mark.parametrize("length", [3000, 6000])
def test_the_references_are_the_passages_the_prompt_shows(length, rerank_dir, ruler_tokenizer):
    """Read off the decoded prompt against the file itself: the query's passages whose whole line is
    in its context, plus the one cut at the end where text of it is left, and no other, each with the
    file's label; every relevant passage whole; the others taken in the file's order."""
    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, None), "exact", Sources(str(rerank_dir), 42, 4)
    )
    rows = _file_rows(rerank_dir)
    for sample in builder.build(TASK, length, 4, 42, length - 200):
        body, tail = tokenizer.decode(sample.ids).rsplit("\n\nQuery: ", 1)
        row = rows[tail.split("\n", 1)[0]]
        context = body.rsplit("\nRanking: ", 1)[-1].split("\n\n", 1)[1]  # after the last demonstration
        lines = {p["id"]: f"[ID: {p['id']}] Document (Title: {p['title']}): {p['text']}" for p in row["ctxs"]}
        whole = [p for p in row["ctxs"] if lines[p["id"]] in context]
        left = context
        for p in whole:
            left = left.replace(lines[p["id"]], "")
        left = left.strip()
        others = [p for p in row["ctxs"] if p["label"] <= 0]
        shown_others = [p for p in whole if p["label"] <= 0]
        assert shown_others == others[: len(shown_others)]  # in the file's order
        expected = {p["id"]: p["label"] for p in whole}
        if left:  # the passage cut at the end: the next one in file order, its line's beginning left
            cut = others[len(shown_others)]
            assert lines[cut["id"]].startswith(left)
            expected[cut["id"]] = cut["label"]
        assert all(p["id"] in expected for p in row["ctxs"] if p["label"] > 0)  # relevant: whole
        assert dict(a.rsplit(":", 1) for a in sample.answers) == {k: str(v) for k, v in expected.items()}


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
