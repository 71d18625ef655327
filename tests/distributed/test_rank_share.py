"""A torchrun rank's share without torchrun: what it sends to its peers and what it makes of theirs
(``all_gather`` replaced by the answers two ranks would give)."""

import pytest

from coca_eval.distributed import torchrun
from coca_eval.distributed.partial import merge_contexts
from coca_eval.distributed.partition import Partition
from coca_eval.distributed.torchrun import Failure, PeerOutOfMemory, RankShare
from coca_eval.errors import CocaEvalError
from coca_eval.results import Cell

BASE = {"task": "passkey", "method": "m", "metric": "accuracy", "length": 64, "dataset": None}


class Peers:
    """Stands in for ``all_gather``: this rank's value, then what rank 1 sends."""

    def __init__(self, theirs):
        self.theirs, self.sent = theirs, []

    def __call__(self, value):
        self.sent.append(value)
        return [value, self.theirs]


def combine(base, parts, context):
    return Cell(**base, value=sum(p["x"] for p in parts), n=len(parts), detail={"parts": parts, **context})


def test_the_cell_is_formed_from_every_rank_parts(monkeypatch):
    monkeypatch.setattr(torchrun, "all_gather", Peers(({1: {"x": 2}, 3: {"x": 8}}, {"reuse": True})))
    share = RankShare(Partition(0, 2))
    cell = share.cell(BASE, {0: {"x": 1}, 2: {"x": 4}}, 4, {"reuse": False}, combine)
    assert cell.value == 15 and [p["x"] for p in cell.detail["parts"]] == [1, 2, 4, 8]
    assert cell.detail["reuse"] is True  # how a rank decoded: true if any rank did


def test_a_cell_counts_as_finished_only_when_every_rank_journaled_it(monkeypatch, tmp_path):
    from coca_eval.journal import Journal

    share = RankShare(Partition(0, 2))
    with Journal(tmp_path / "j.jsonl") as journal:
        journal.record_cell("k", combine(BASE, [{"x": 1}], {}))
        monkeypatch.setattr(torchrun, "all_gather", Peers(False))
        assert share.finished(journal, "k") is None  # rank 1 lacks it: gather once more with it
        monkeypatch.setattr(torchrun, "all_gather", Peers(True))
        assert share.finished(journal, "k").value == 1


def test_a_peer_out_of_memory_fails_the_cell_here_too(monkeypatch):
    peers = Peers(Failure(1, "CUDA out of memory. Tried to allocate 64.00 GiB"))
    monkeypatch.setattr(torchrun, "all_gather", peers)
    share = RankShare(Partition(0, 2))
    with pytest.raises(PeerOutOfMemory, match="^rank 1: CUDA out of memory"):
        share.cell(BASE, {0: {"x": 1}}, 2, {}, combine)
    share.abandon(PeerOutOfMemory("rank 1: ..."))  # it gathered already: nothing more is sent
    assert len(peers.sent) == 1
    share.abandon(MemoryError("out of memory here"))
    assert peers.sent[-1] == Failure(0, "out of memory here")


def test_journals_are_per_rank_and_only_rank_0_leads():
    assert RankShare(Partition(1, 4)).journal_tag == "rank-1-of-4"
    assert [RankShare(Partition(i, 2)).leads for i in range(2)] == [True, False]


def test_contexts_must_agree_on_what_changes_a_number():
    assert merge_contexts([{"bos": "never", "reuse": False}, {"bos": "never", "reuse": True}]) == {
        "bos": "never",
        "reuse": True,
    }
    with pytest.raises(CocaEvalError, match="disagree on bos: 'never' and 'always'"):
        merge_contexts([{"bos": "never"}, {"bos": "always"}])


def test_shard_and_torchrun_do_not_combine(monkeypatch):
    from coca_eval.distributed.share import WHOLE
    from coca_eval.distributed.torchrun import share_for

    assert share_for(None, "cpu") == (WHOLE, "cpu")
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0")):
        monkeypatch.setenv(name, value)
    with pytest.raises(CocaEvalError, match="under torchrun the ranks split it already"):
        share_for("1/2", "cpu")
