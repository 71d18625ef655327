"""The thirteen task definitions carry RULER's parameters; names and groups resolve or fail in one line."""

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.ruler.tasks import RULER_GROUPS, RULER_TASKS, expand_task_names

RULER_NAMES = [
    *(f"niah_single_{i}" for i in (1, 2, 3)),
    *(f"niah_multikey_{i}" for i in (1, 2, 3)),
    "niah_multivalue",
    "niah_multiquery",
    "vt",
    "cwe",
    "fwe",
    "qa_1",
    "qa_2",
]


def test_thirteen_tasks_in_ruler_order_and_the_ruler_group():
    assert RULER_TASKS.names() == RULER_NAMES
    assert dict(RULER_GROUPS) == {"ruler": tuple(RULER_NAMES)}


def test_ruler_parameters():
    get = RULER_TASKS.get
    niah = {
        n: (t.haystack, t.key_type, t.value_type, t.keys, t.values, t.queries, t.needles)
        for n in RULER_NAMES[:8]
        for t in [get(n)]
    }
    assert niah == {
        "niah_single_1": ("noise", "words", "numbers", 1, 1, 1, 1),
        "niah_single_2": ("essay", "words", "numbers", 1, 1, 1, 1),
        "niah_single_3": ("essay", "words", "uuids", 1, 1, 1, 1),
        "niah_multikey_1": ("essay", "words", "numbers", 4, 1, 1, 4),
        "niah_multikey_2": ("needle", "words", "numbers", 1, 1, 1, 1),
        "niah_multikey_3": ("needle", "uuids", "uuids", 1, 1, 1, 1),
        "niah_multivalue": ("essay", "words", "numbers", 1, 4, 1, 4),
        "niah_multiquery": ("essay", "words", "numbers", 4, 1, 4, 4),
    }
    budgets = {n: get(n).answer_budget for n in RULER_NAMES}
    assert budgets == {
        **{n: 128 for n in RULER_NAMES[:8]},
        "vt": 30,
        "cwe": 120,
        "fwe": 50,
        "qa_1": 32,
        "qa_2": 32,
    }
    metrics = {n: get(n).metric for n in RULER_NAMES}
    assert {n for n, m in metrics.items() if m == "string_match_part"} == {"qa_1", "qa_2"}
    assert (get("vt").chains, get("vt").hops, get("vt").haystack) == (1, 4, "noise")
    cwe = get("cwe")
    assert (cwe.common_repeats, cwe.uncommon_repeats, cwe.common_words) == (30, 3, 10)
    assert (get("fwe").alpha, get("fwe").coded_word_length) == (2.0, 6)
    assert (get("qa_1").dataset, get("qa_2").dataset) == ("squad", "hotpotqa")


def test_single_value_tasks_read_in_the_singular():
    single, multi = RULER_TASKS.get("niah_single_1"), RULER_TASKS.get("niah_multivalue")
    assert single.wording(single.template).startswith("A special magic {type_needle_v} is hidden")
    assert "What is the special magic" in single.wording(single.template)
    assert single.wording(single.answer_prefix).endswith("provided text is") and single.value_noun == "number"
    assert multi.wording(multi.template) == multi.template and multi.value_noun == "numbers"
    assert not RULER_TASKS.get("niah_multiquery").singular


def test_expand_task_names():
    assert expand_task_names(["ruler"]) == tuple(RULER_NAMES)
    assert expand_task_names(["vt", "niah_single_1", "vt"]) == ("vt", "niah_single_1")
    with pytest.raises(
        CocaEvalError, match="unknown RULER task 'qa_squad'.*valid: ruler, niah_single_1"
    ) as err:
        expand_task_names(["qa_squad"])
    assert "\n" not in str(err.value)
