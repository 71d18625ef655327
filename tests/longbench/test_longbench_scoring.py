"""Our LongBench scorers against LongBench's own: the values its ``metrics.py``/``eval.py`` and v2's
``pred.py``/``result.py`` gave on the frozen answers of ``data/predictions.json``
(``data/longbench_values.json``, made by ``scripts/longbench_scorer_values.py`` outside this project at
the commit it records; the task and bucket values are what ``eval.py`` run as a script wrote), held
exactly, sample by sample, task by task and bucket by bucket; and the category rule held to the tables
LongBench published in its README at that commit."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from coca_eval.longbench.averages import (
    CATEGORIES,
    TASKS,
    bucket_averages,
    category_averages,
    category_table,
    task_bucket_scores,
)
from coca_eval.longbench.scoring import METRIC_OF_TASK, row_score, task_score
from coca_eval.longbench.scoring_v2 import accuracy_table, extract_choice, judged_row

DATA = Path(__file__).parent / "data"
CASES = json.loads((DATA / "predictions.json").read_text(encoding="utf-8"))
THEIRS = json.loads((DATA / "longbench_values.json").read_text(encoding="utf-8"))
V1 = CASES["v1"]
V2 = CASES["v2"]


def _rows_of(task: str) -> list[dict]:
    return [case for case in V1 if case["task"] == task]


def _same(ours: float, theirs: float) -> bool:
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


def test_the_values_come_from_the_commit_the_module_names():
    assert THEIRS["longbench_commit"] == "2e00731f8d0bff23dc4325161044d0ed8af94c1e"
    assert len(THEIRS["v1_sample"]) == len(V1) and len(THEIRS["v2"]["letters"]) == len(V2)


def test_the_frozen_set_covers_every_task_and_the_tasks_map_to_their_metrics():
    assert {case["task"] for case in V1} == set(METRIC_OF_TASK) == set(TASKS)
    assert len(TASKS) == 21 and sum(map(len, CATEGORIES.values())) == 21


@pytest.mark.parametrize(("case", "theirs"), list(zip(V1, THEIRS["v1_sample"], strict=True)))
def test_each_answer_scores_as_longbenchs_scorer(case, theirs):
    assert 100 * row_score(case["task"], case) == theirs, case["note"]


@pytest.fixture(scope="module")
def our_task_scores() -> dict[str, float]:
    """Each task's score, once (the recursion-limit cases take rouge a second each)."""
    return {task: task_score(task, _rows_of(task)) for task in TASKS}


@pytest.mark.parametrize("task", TASKS)
def test_each_task_scores_as_eval_py_prints_it(task, our_task_scores):
    assert our_task_scores[task] == THEIRS["v1_task"][task]


@pytest.mark.parametrize("task", TASKS)
def test_each_task_scores_per_length_bucket_as_longbench_e(task):
    ours, theirs = task_bucket_scores(task, _rows_of(task)), THEIRS["v1_task_e"][task]
    assert ours.keys() == theirs.keys()
    assert all(_same(ours[b], theirs[b]) for b in ours), (ours, theirs)


def test_bucket_averages_take_the_tasks_that_have_the_bucket():
    theirs = THEIRS["v1_task_e"]
    averages = bucket_averages(theirs)
    for bucket, value in averages.items():
        present = [s[bucket] for s in theirs.values() if not math.isnan(s[bucket])]
        assert value == pytest.approx(sum(present) / len(present))


@pytest.mark.parametrize(("case", "letter"), list(zip(V2, THEIRS["v2"]["letters"], strict=True)))
def test_v2_letters_are_extracted_as_longbench_v2s(case, letter):
    assert extract_choice(case["response"]) == letter


def test_v2_accuracy_tables_print_as_result_py():
    rows = [judged_row(case["response"], case) for case in V2]
    assert [row["judge"] for row in rows] == THEIRS["v2"]["judge"]
    for name, subset in (("all", rows), ("first_twelve", rows[:12])):
        theirs = {column: float(value) for column, value in THEIRS["v2"]["result"][name].items()}
        assert accuracy_table(subset) == theirs


def test_v2_compensated_credit_and_empty_classes():
    rows = [{"pred": None, "judge": False, "difficulty": "easy", "length": "short"}]
    rows.append({"pred": "A", "judge": True, "difficulty": "easy", "length": "short"})
    table = accuracy_table(rows, compensated=True)
    assert table["Overall"] == 62.5 and table["Hard"] is None and table["Long"] is None


_COLUMNS = {  # the README's column names for the task ids
    "NarrativeQA": "narrativeqa", "Qasper": "qasper", "MultiFieldQA-en": "multifieldqa_en",
    "MultiFieldQA-zh": "multifieldqa_zh", "HotpotQA": "hotpotqa", "2WikiMQA": "2wikimqa",
    "Musique": "musique", "DuReader (zh)": "dureader", "GovReport": "gov_report", "QMSum": "qmsum",
    "MultiNews": "multi_news", "VCSUM (zh)": "vcsum", "TREC": "trec", "TriviaQA": "triviaqa",
    "SAMSum": "samsum", "LSHT (zh)": "lsht", "Passage Count": "passage_count",
    "PassageRetrieval-en": "passage_retrieval_en", "PassageRetrieval-zh": "passage_retrieval_zh",
    "LCC": "lcc", "RepoBench-P": "repobench-p",
}  # fmt: skip
_LEADERBOARDS = {"English": "en", "Chinese": "zh"}


def _published_task_scores() -> dict[str, dict[str, float]]:
    models: dict[str, dict[str, float]] = {}
    for title, table in THEIRS["published"].items():
        if title in _LEADERBOARDS:
            continue
        for model, row in table.items():
            models.setdefault(model, {}).update({_COLUMNS[c]: float(v) for c, v in row.items()})
    return models


@pytest.mark.parametrize("board", sorted(_LEADERBOARDS))
def test_category_averages_give_the_published_leaderboard(board):
    """The README averaged unrounded task scores and prints them to one place: from its one-place task
    tables a category can land 0.1 away (each task off by up to 0.05, the print by 0.05), never more;
    most cells land exactly."""
    tasks = _published_task_scores()
    published = THEIRS["published"][board]
    assert len(published) == 8 and all(len(tasks[model]) == 21 for model in published)
    exact, language = 0, _LEADERBOARDS[board]
    for model, row in published.items():
        ours, printed = category_averages(tasks[model], language), category_table(tasks[model], language)
        assert ours.keys() == row.keys()
        assert all(abs(ours[c] - float(v)) <= 0.1 + 1e-9 for c, v in row.items()), (model, ours, row)
        exact += sum(printed[c] == float(v) for c, v in row.items())
    assert exact >= 0.8 * 7 * len(published)


def test_category_averages_of_our_task_scores_equal_those_of_longbenchs(our_task_scores):
    for language in ("en", "zh"):
        theirs = category_averages(THEIRS["v1_task"], language)
        assert category_averages(our_task_scores, language) == theirs
        assert len(theirs) == 7


def test_importing_coca_eval_loads_none_of_the_scoring_libraries():
    code = (
        "import sys, coca_eval, coca_eval.longbench.scoring, coca_eval.longbench.averages, "
        "coca_eval.longbench.scoring_v2; "
        "print(sorted(m for m in ('jieba', 'rouge', 'fuzzywuzzy') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_code_similarity_uses_difflib_as_longbenchs_requirements_leave_it():
    import difflib

    from coca_eval.longbench.scoring import _fuzz

    assert _fuzz().SequenceMatcher is difflib.SequenceMatcher
