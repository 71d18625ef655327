"""``--samples auto`` in the passkey task: rounds in visiting order, the cell's record of the stop, resume
mid-cell from the journal, and the same samples as a fixed run of ``--max-samples``."""

from __future__ import annotations

import re

import pytest

from coca_eval.errors import CocaEvalError
from coca_eval.journal import Journal
from coca_eval.methods import MethodSpec
from coca_eval.passkey.params import make_passkey_params
from coca_eval.passkey.task import PasskeyTask, draw_samples_for
from coca_eval.progress import CellProgress
from coca_eval.sequential import StoppingRule, stop_point, visiting_order

LENGTH = 600


class Crash(Exception):
    pass


class CharTokenizer:
    @staticmethod
    def decode(tokens, skip_special_tokens=True):
        return "".join(chr(t - 100) for t in tokens)


class AnsweringBackend:
    """One token per character; answers a prompt's key when the key is odd, a wrong number otherwise
    (accuracy about one half), and can crash after a number of rounds (a killed run)."""

    position_limit, adds_bos, bos_token_id = None, False, None
    tokenizer = CharTokenizer()

    def __init__(self, crash_after_rounds: int | None = None):
        self.rounds: list[int] = []
        self.crash_after_rounds = crash_after_rounds

    @staticmethod
    def encode(text):
        return [100 + ord(c) for c in text]

    def generate_greedy(self, prompts, prefixes, max_new_tokens, on_done, prefix_reuse, **_):
        if self.crash_after_rounds is not None and len(self.rounds) == self.crash_after_rounds:
            raise Crash
        self.rounds.append(len(prompts))
        for i, ids in enumerate(prompts):
            key = int(re.findall(r"\d{5}", CharTokenizer.decode(ids))[0])
            on_done(i, self.encode(f" {key if key % 2 else key + 1}."))
        return bool(prompts)


def _run(tmp_path, values: dict, backend: AnsweringBackend):
    params = make_passkey_params({"lengths": [LENGTH], **values})
    method = MethodSpec(model="char-model", label="chars")
    with Journal(tmp_path / "journal.jsonl") as journal, CellProgress(1) as progress:
        task = PasskeyTask(params, journal, progress)
        key = task.cell_key(method, "w", LENGTH)
        return task.evaluate(method, backend, task.prepare(method, backend), LENGTH, key)


AUTO = {"samples": "auto", "max_samples": 200, "threshold": 0.75}


def test_a_sequential_cell_records_its_stop(tmp_path):
    backend = AnsweringBackend()
    cell = _run(tmp_path, AUTO, backend)
    seq = cell.detail["sequential"]
    assert cell.status == "ok" and seq["decision"] == "below 0.75"
    assert cell.n == seq["samples_spent"] == sum(backend.rounds) < 200
    assert set(backend.rounds) == {10}  # one round of ten per look
    order = visiting_order("passkey", 0, LENGTH, 200)
    assert [s["index"] for s in cell.detail["samples"]] == sorted(order[: cell.n])
    correct = {s["index"]: s["correct"] for s in cell.detail["samples"]}
    assert cell.value == 100 * sum(correct.values()) / cell.n  # points; the rule's own record in 0-1
    replay = stop_point([float(correct[i]) for i in order[: cell.n]], StoppingRule(200, threshold=0.75))
    assert seq["interval"] == list(replay.interval) and seq["interval"][1] < 0.75
    assert seq["threshold"] == 0.75 and seq["max_samples"] == 200 and seq["round_size"] == 10


def test_a_sequential_cell_holds_the_fixed_runs_samples(tmp_path):
    """Under auto the design is the fixed run of --max-samples: same index, same key and depth."""
    cell = _run(tmp_path, AUTO, AnsweringBackend())
    fixed = {s.index: s for s in draw_samples_for(make_passkey_params({"samples": 200}), LENGTH)}
    for sample in cell.detail["samples"]:
        assert (sample["key"], sample["depth"]) == (fixed[sample["index"]].key, fixed[sample["index"]].depth)


def test_a_killed_sequential_cell_resumes_mid_cell(tmp_path):
    whole = _run(tmp_path / "whole", AUTO, AnsweringBackend())
    with pytest.raises(Crash):
        _run(tmp_path / "cut", AUTO, AnsweringBackend(crash_after_rounds=2))
    again = AnsweringBackend()
    resumed = _run(tmp_path / "cut", AUTO, again)
    assert sum(again.rounds) == whole.n - 20  # the two journaled rounds are not decoded again
    assert resumed.model_dump() == whole.model_dump()


def test_the_width_rule_spends_more_than_the_threshold_rule(tmp_path):
    cell = _run(tmp_path, {"samples": "auto", "max_samples": 60, "target_width": 0.1}, AnsweringBackend())
    assert cell.n == 60 and cell.detail["sequential"]["decision"] == "undecided at 60"


def test_a_fixed_run_keeps_its_identity_and_refuses_rule_options():
    assert set(make_passkey_params({}).identity()) == {
        "lengths", "samples", "seed", "max_new_tokens", "depths", "template"
    }  # fmt: skip
    with pytest.raises(CocaEvalError, match="--max-samples, --threshold only apply with --samples auto"):
        make_passkey_params({"max_samples": 10, "threshold": 0.5})
    with pytest.raises(CocaEvalError, match="--samples auto needs --max-samples"):
        make_passkey_params({"samples": "auto", "threshold": 0.5})


def test_auto_refuses_a_shard(tmp_path):
    from coca_eval.distributed.torchrun import share_for

    share, _ = share_for("1/2", "cpu")
    params = make_passkey_params({"lengths": [LENGTH], **AUTO})
    with Journal(tmp_path / "j.jsonl") as journal, pytest.raises(CocaEvalError, match="leave out --shard"):
        PasskeyTask(params, journal, CellProgress(1), share=share)


def test_a_replay_of_a_fixed_run_spends_what_a_live_sequential_run_spent(tmp_path):
    """What reports/zoo/sequential.md claims: the replay is the live run, not an estimate of it."""
    from coca_eval.sequential_replay import replay_cell

    fixed = _run(tmp_path / "fixed", {"samples": 200}, AnsweringBackend())
    live = _run(tmp_path / "live", AUTO, AnsweringBackend())
    replay = replay_cell(fixed, 0, threshold=0.75)
    assert (replay.spent, list(replay.interval)) == (live.n, live.detail["sequential"]["interval"])
    assert replay.decision == live.detail["sequential"]["decision"]
    assert 100 * replay.mean == pytest.approx(live.value)
