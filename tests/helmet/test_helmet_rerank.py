"""Re-ranking under the exact protocol: every prompt is N minus the budget, chat on and off; the
relevant passages are whole and the references are the passages shown; the ideal ranking scores NDCG@10
of 1 and an empty answer 0 through a whole run."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.chat import chat_frame
from coca_eval.generation.assembly import ExactPromptBuilder
from coca_eval.generation.draws import SampleKey
from coca_eval.generation.segments import Pieces
from coca_eval.helmet.params import make_helmet_params
from coca_eval.helmet.prompts import HelmetPromptBuilder, Sources
from coca_eval.helmet.rerank import draw_rerank, load_rerank_set
from coca_eval.helmet.scoring import score_answer
from coca_eval.helmet.tasks import HELMET_TASKS
from coca_eval.methods import make_method
from tests.helmet.helmet_files import write_rerank_dir
from tests.ruler.scripted_backend import MODE

TASK = "msmarco_rerank_psg"


@pytest.fixture(scope="module")
def rerank_dir(tmp_path_factory):
    return write_rerank_dir(tmp_path_factory.mktemp("rerank"))


def _file_rows(rerank_dir) -> dict[str, dict]:
    """The exact protocol's file (HELMET's k = 600), read here as plain JSON: query text -> row."""
    path = rerank_dir / "msmarco" / "test_reranking_data_k600_dep3.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["query"]: row for row in rows}


def _line(p: dict) -> str:
    return f"[ID: {p['id']}] Document (Title: {p['title']}): {p['text']}"


def _shown(context: str, row: dict) -> dict[str, int]:
    """The row's passages read off ``context`` against the file itself: those whose whole line is in
    it, plus the one cut at the end where text of it (more than its blank line) is left, each with the
    file's label; the others are taken in the file's order and every relevant passage is whole."""
    whole = [p for p in row["ctxs"] if _line(p) in context]
    left = context
    for p in whole:
        assert left.count(_line(p)) == 1, "each passage once"
        left = left.replace(_line(p), "")
    left = left.strip()
    others = [p for p in row["ctxs"] if p["label"] <= 0]
    shown_others = [p for p in whole if p["label"] <= 0]
    assert shown_others == others[: len(shown_others)]  # in the file's order
    shown = {p["id"]: p["label"] for p in whole}
    if left:  # the passage cut at the end: the next one in file order, its line's beginning left
        cut = others[len(shown_others)]
        assert _line(cut).startswith(left)
        shown[cut["id"]] = cut["label"]
    assert all(p["id"] in shown for p in row["ctxs"] if p["label"] > 0)  # relevant: whole
    return shown


def _best_first(shown: dict[str, int], row: dict) -> list[str]:
    """HELMET's reference order, computed here: the file's passages, best label first, ties in file order."""
    listed = [p for p in row["ctxs"] if p["id"] in shown]
    order = []
    for label in sorted({p["label"] for p in listed}, reverse=True):
        order += [f"{p['id']}:{label}" for p in listed if p["label"] == label]
    return order


@pytest.mark.parametrize("with_chat", [False, True], ids=["base", "chat"])
def test_every_prompt_is_n_minus_the_budget_with_the_relevant_passages_whole(
    with_chat, rerank_dir, ruler_tokenizer, chat_templates
):
    """The prompt's length, and its passages read off the decoded prompt against the file: the
    sample records as many passages as its context shows, and its references are those passages with
    the file's labels, best first (equal labels in the file's order)."""
    tokenizer = ruler_tokenizer("zoo")
    chat = chat_frame(str(chat_templates["simple"]), tokenizer) if with_chat else None
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    builder = HelmetPromptBuilder(
        ExactPromptBuilder(encode, None, chat), "exact", Sources(str(rerank_dir), 42, 4)
    )
    rows = _file_rows(rerank_dir)
    for length in (3000, 6000):
        for sample in builder.build(TASK, length, 4, 42, length - 200):
            assert len(sample.ids) == length - 200
            body, tail = tokenizer.decode(sample.ids).rsplit("\n\nQuery: ", 1)
            row = rows[tail.split("\n", 1)[0]]
            shown = _shown(body.rsplit("\nRanking: ", 1)[-1].split("\n\n", 1)[1], row)
            assert sample.detail["passages"] == len(shown)
            assert list(sample.answers) == _best_first(shown, row)


@pytest.mark.parametrize("length", [3000, 6000])
def test_the_references_are_the_passages_the_prompt_shows(length, rerank_dir, ruler_tokenizer):
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
        shown = _shown(context, row)
        assert dict(a.rsplit(":", 1) for a in sample.answers) == {k: str(v) for k, v in shown.items()}


def test_a_context_ending_at_a_passages_edge_or_in_its_blank_line_lists_only_what_it_shows(
    rerank_dir, ruler_tokenizer
):
    """Every context budget across two whole passages of the file: one that ends exactly where a
    passage ends, or inside the blank line before the next, lists no passage it does not show."""
    tokenizer = ruler_tokenizer("zoo")
    encode = lambda text: tokenizer(text, add_special_tokens=False).input_ids  # noqa: E731
    kit = SimpleNamespace(encode=encode, pieces=Pieces(encode))
    data = load_rerank_set(str(rerank_dir), 600, 2, 42, 2)
    row = _file_rows(rerank_dir)[data.row(0).query]
    draw = draw_rerank(None, random.Random(1), kit, SampleKey(42, 3000, 0), data)
    relevant = sum(len(encode("\n\n" + _line(p))) for p in row["ctxs"] if p["label"] > 0)
    others = [p for p in row["ctxs"] if p["label"] <= 0]
    first, second = len(encode(_line(others[0]))), len(encode("\n\n" + _line(others[1])))
    for budget in range(relevant + first - 3, relevant + first + second + 4):
        context = draw.fill(budget)
        assert len(context.ids) == budget
        shown = _shown(tokenizer.decode(context.ids), row)
        assert context.detail["passages"] == len(shown)
        assert list(context.answers) == _best_first(shown, row)


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
