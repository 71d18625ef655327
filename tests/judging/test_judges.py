"""The judge on its own: what ``--judge`` names, its calls journaled and counted (asked once, then
reused, from a reopened journal too), a transport error as a failed judgement naming the sample, and a
judge that is a local model directory: loaded, greedy (the same reply twice), named by its weights'
fingerprint."""

from __future__ import annotations

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.judging.judges import Judge, JudgeFailed, JudgeSpec, judge_identity, parse_judge

MESSAGES = [{"role": "system", "content": "Grade."}, {"role": "user", "content": "Is 2 + 2 = 4?"}]


class Scripted:
    """A transport that replies from a list, and fails on a reply that is an exception."""

    def __init__(self, *replies) -> None:
        self.replies, self.asked = list(replies), []

    def reply(self, messages, max_tokens):
        self.asked.append((messages, max_tokens))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_what_judge_names():
    assert parse_judge("http://host:8000/v1/") == JudgeSpec("http://host:8000/v1/", "http://host:8000/v1")
    assert (
        parse_judge("https://h/v1#qwen").model == "qwen"
        and parse_judge("https://h/v1#qwen").url == "https://h/v1"
    )
    assert not parse_judge("smollm2-135m").is_server
    with pytest.raises(CocaEvalError, match="--judge needs a model"):
        parse_judge("  ")


def test_calls_are_journaled_counted_and_reused_after_a_restart(tmp_path):
    path = tmp_path / "run.journal.jsonl"
    transport = Scripted("CORRECT", "INCORRECT")
    with Journal(path) as journal:
        judge = Judge(JudgeSpec("j"), "fingerprint", journal, 16, transport)
        assert judge.ask(MESSAGES, "sample 0") == "CORRECT"
        assert judge.ask(MESSAGES, "sample 0") == "CORRECT"
        assert (judge.asked, judge.reused) == (1, 1)
        assert transport.asked == [(MESSAGES, 16)]
    with Journal(path) as journal:  # a new process on the same journal
        again = Judge(JudgeSpec("j"), "fingerprint", journal, 16, Scripted())
        assert again.ask(MESSAGES, "sample 0") == "CORRECT" and (again.asked, again.reused) == (0, 1)
        other = Judge(JudgeSpec("k"), "another judge", journal, 16, Scripted("INCORRECT"))
        assert other.ask(MESSAGES, "sample 0") == "INCORRECT" and other.asked == 1  # keyed by identity


def test_a_transport_error_is_a_failed_judgement_naming_the_sample(tmp_path):
    with Journal(tmp_path / "j.jsonl") as journal:
        judge = Judge(JudgeSpec("j"), "id", journal, 16, Scripted(CocaEvalError("server sent no answer")))
        with pytest.raises(JudgeFailed, match="question 7: the judge gave no verdict: server sent no answer"):
            judge.ask(MESSAGES, "question 7")
        assert judge.key not in journal.parts  # nothing journaled: a rerun asks again


def test_a_local_directory_judges_greedily_through_its_chat_template(tiny_chat_dir, tmp_path):
    from coca_eval.models.presets import model_fingerprint

    spec, identity = judge_identity(parse_judge(str(tiny_chat_dir)))
    assert identity == model_fingerprint(str(tiny_chat_dir))
    with Journal(tmp_path / "j.jsonl") as journal:
        judge = Judge(spec, identity, journal, 6)
        first = judge.ask(MESSAGES, "sample 0")
        second = Judge(spec, identity, Journal.read_only(journal.path), 6).transport().reply(MESSAGES, 6)
    assert isinstance(first, str) and first and first == second
