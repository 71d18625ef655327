"""HELMET's newline stop as its code runs it, not as its configs read.

HELMET's configs set ``stop_new_line: true`` for RAG, re-rank and ICL, but its parser's argument is
``--stop_newline`` (``arguments.py`` l. 47, default False) and the config's keys only become parser
defaults (l. 64-66), so ``load_LLM`` builds every model with ``stop_newline=False`` (``model_utils.py``
l. 1290): HELMET decodes the whole budget and scores every line. The expected scores below are worked
out here from HELMET's definitions (``utils.py``: ``normalize_answer``, ``substring_exact_match_score``;
``data.py``: ``default_post_process`` keeps the better of the raw and the parsed answer), not read from
our scorer.
"""

from __future__ import annotations

import re
import string

import pytest

from coca_eval.api import Runtime, evaluate
from coca_eval.helmet.params import make_helmet_params
from coca_eval.helmet.task import HelmetRunner
from coca_eval.helmet.tasks import HELMET_TASKS
from coca_eval.methods import make_method
from tests.ruler.scripted_backend import HEDGE, MODE

HEDGED = " I am not sure.\nAnswer: Paris"


def helmet_substring_em(output: str, answers: list[str]) -> float:
    """HELMET's substring exact match written out from its definition: SQuAD normalisation (lower
    case, punctuation and articles dropped, whitespace collapsed), then ``answer in output``."""

    def norm(text: str) -> str:
        text = "".join(c for c in text.lower() if c not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())

    return float(any(norm(a) in norm(output) for a in answers))


def _runner(protocol: str) -> HelmetRunner:
    runner = HelmetRunner.__new__(HelmetRunner)  # the stop rule and scorer read the params alone
    runner.params = make_helmet_params({"tasks": "kilt_nq", "protocol": protocol})
    return runner


def _decoded(runner: HelmetRunner, task, text: str) -> str:
    """``text`` decoded one word (and each newline alone) at a time under the runner's stop rule."""
    words = re.findall(r"\n|[^\S\n]*\S+", text)
    kept = runner.stop_rule(task).cut(range(len(words)), set(), lambda ids: "".join(words[i] for i in ids))
    return "".join(words[i] for i in kept)


def test_the_worked_reference_value():
    assert helmet_substring_em(HEDGED, ["Paris"]) == 1.0
    assert helmet_substring_em(" I am not sure.\n", ["Paris"]) == 0.0


@pytest.mark.parametrize("name", ["kilt_nq", "msmarco_rerank_psg", "icl_trec_coarse"])
def test_protocol_helmet_never_stops_at_a_newline(name):
    task = HELMET_TASKS.get(name)
    assert task.stop_newline  # HELMET's config asks for it ...
    assert _decoded(_runner("helmet"), task, HEDGED) == HEDGED  # ... its code does not stop


def test_protocol_helmet_scores_a_second_line_answer_as_helmet_does():
    runner, task = _runner("helmet"), HELMET_TASKS.get("kilt_nq")
    output = _decoded(runner, task, HEDGED)
    assert runner.score(task, output, ["Paris"])["score"] == helmet_substring_em(HEDGED, ["Paris"]) == 1.0


def test_protocol_exact_keeps_the_first_line_and_scores_it():
    runner, task = _runner("exact"), HELMET_TASKS.get("kilt_nq")
    output = _decoded(runner, task, HEDGED)
    assert output == " I am not sure.\n"
    assert runner.score(task, output, ["Paris"])["score"] == helmet_substring_em(output, ["Paris"]) == 0.0


def test_a_protocol_helmet_journal_from_the_newline_rule_is_not_resumed():
    """The cell key of a task whose stop rule changed carries the rule; exact keys are as they were."""
    method = make_method("zoo-rope", "none", "zoo", "float32", "hf")
    helmet, exact = _runner("helmet"), _runner("exact")
    assert helmet.cell_identity(method, "w", 8192, "kilt_nq")["newline_stop"] is False
    assert "newline_stop" not in helmet.cell_identity(method, "w", 8192, "json_kv")
    assert "newline_stop" not in exact.cell_identity(method, "w", 8192, "kilt_nq")


@pytest.mark.usefixtures("scripted")
def test_a_whole_rag_run_scores_the_hedged_answer_under_each_protocol(tmp_path):
    """The scripted model answers every question on its second line (its first says it is not sure);
    HELMET's code credits it (100),
    the exact protocol's newline stop does not (0)."""
    from tests.helmet.helmet_files import write_data_dir

    data = str(write_data_dir(tmp_path / "data", 5))
    MODE["answer"] = "hedged"
    method = make_method("zoo-rope", "none", "zoo", "float32", "scripted")
    values = {"tasks": "kilt_nq", "lengths": "8k", "samples": 3, "seed": 3, "data": data}
    cells = {}
    for protocol in ("helmet", "exact"):
        params = make_helmet_params({**values, "protocol": protocol})
        run = evaluate("helmet", [method], params, tmp_path / f"{protocol}.json", Runtime())
        (cells[protocol],) = run.cells
    for protocol, expected in (("helmet", 100.0), ("exact", 0.0)):
        samples = cells[protocol].detail["samples"]
        worked = [100 * helmet_substring_em(s["output"], s["answers"]) for s in samples]
        assert cells[protocol].value == sum(worked) / len(worked) == expected, protocol
    assert all(s["output"] == HEDGE + s["answers"][0] for s in cells["helmet"].detail["samples"])
    assert all(s["output"] == HEDGE for s in cells["exact"].detail["samples"])
